"""schemathesis hooks for `cargo xtask conformance`.

Every check stays on; a failure is dropped only when it is one of the answers listed below,
each keyed by operation id and catalog `errorName`, with the reason it is right:

- SPEC_MANDATED_5XX: 5xx answers the specification mandates (its Errors section). The
  throwaway service has no listener services, so control commands meet them on purpose.
- NOT_EXPRESSIBLE: 4xx answers to schema-valid requests that OpenAPI cannot describe: they
  depend on stored state (a calendar id already taken, a listener id that names nothing) or on
  two values together (a passcode without a meeting id, `from` after `to`). Each is matched by
  the start of its errorMessage too.
- ACCEPTED_NEGATIVE: schema-violating requests the service rightly accepts (a header that
  changes what the body is).

Anything else fails the run: an InternalError or StorageUnavailable, a 5xx without a catalog
body, a listed error on an operation it is not listed for.

A serializer for `application/vnd.ms-excel`, one of the CSV upload's content types: the body
is the same CSV text.
"""

import atexit
import collections
import json
import sys

import schemathesis

JSON_BODY_OPERATIONS = (
    "endpoints.insert",
    "endpoints.insertSlash",
    "endpoints.update",
    "endpoints.patch",
    "enterprises.updateSelf",
    "listenerServices.create",
    "listenerServices.update",
    "calendaraccounts.put",
    "webhooks.create",
    "webhooks.update",
    "templates.create",
    "templates.update",
    "templates.patch",
    "templates.plan",
    "templates.apply",
    "templates.assign",
    "templates.unassign",
)

CONTROL_OPERATIONS = (
    "endpoints.join",
    "endpoints.sendDtmf",
    "endpoints.hangUp",
    "endpoints.muteMicrophone",
    "endpoints.unmuteMicrophone",
)

# The 5xx entries of the control commands' error lists (routes/control.rs, through_listener):
# what a command meets on its way through a listener service.
LISTENER_5XX = {
    "EndpointHasNoListenerService": "the endpoint names no listener service (spec: 500)",
    "EncryptionUpdated": "the password was sealed to a previous public key (spec: 500)",
    "ListenerOffline": "the listener service is offline (spec: 503)",
    "CommandTimedOut": "the listener service did not answer in time (spec: 504)",
    "ForwardsCompatibility": "the listener is too old for the command (spec: 501)",
    "NoSuchHandler": "the listener is too old for the command (spec: 501)",
    "UnknownControlProtocol": "the listener is too old for the command (spec: 501)",
    "ExternalSystemUnreachable": "the room system could not be reached (spec: 504)",
    "ExternalSystemTimedOut": "the room system timed out (spec: 504)",
    "AuthenticationFailed": "the room system refused the stored credentials (spec: 502)",
    "IncorrectlyProvisioned": "the room system is provisioned wrongly (spec: 502)",
    "Unavailable": "the room system answered with a server error (spec: 503)",
    "BadCommand": "the listener refused the command (spec: 500)",
    "ListenerServiceException": "the listener service failed (spec: 500)",
    "MessagingException": "the listener could not be messaged (spec: 502)",
}

# The spec answers a malformed JSON body with 500. Only for schema-violating (negative) data:
# a schema-valid body must never be a mapping error.
MALFORMED_JSON_5XX = {
    "JsonParseException": "the body is not JSON (spec: 500)",
    "JsonMappingException": "a property has the wrong JSON type (spec: 500)",
}

# operation id -> errorName -> (reason, whether schema-valid data may meet it)
SPEC_MANDATED_5XX = {
    **{op: {name: (why, False) for name, why in MALFORMED_JSON_5XX.items()} for op in JSON_BODY_OPERATIONS},
    **{op: {name: (why, True) for name, why in LISTENER_5XX.items()} for op in CONTROL_OPERATIONS},
}

# A room's meetings are read from its calendar system at request time; the throwaway service's
# accounts can only name loopback (calendar.allowed_hosts), where nothing answers CalDAV.
SPEC_MANDATED_5XX["endpoints.meetings"] = {
    "CalendarServerException": ("the room's calendar cannot be read (spec: 502)", True)
}

ENDPOINT_WRITES = (
    "endpoints.insert",
    "endpoints.insertSlash",
    "endpoints.update",
    "endpoints.patch",
)

# operation id -> errorName -> [(the start of the errorMessage it covers, reason)]
NOT_EXPRESSIBLE = {op: {} for op in ENDPOINT_WRITES}
for op in ENDPOINT_WRITES:
    NOT_EXPRESSIBLE[op]["DuplicateCalendarId"] = [("", "calendarId is unique per enterprise: another endpoint has it")]
    NOT_EXPRESSIBLE[op]["Invalid"] = [("listenerServiceId:", "must name a listener service of the enterprise")]
for op in ("endpoints.update", "endpoints.patch"):
    NOT_EXPRESSIBLE[op]["Unmodifiable"] = [("The ANNEX_O dialStyle", "the stored endpoint's ANNEX_O dial style is fixed")]
for op in ("endpoints.bulkPut", "endpoints.bulkPost", "endpoints.bulkPlan"):
    NOT_EXPRESSIBLE[op] = {"Invalid": [("CSV header: column '", "a column named twice (a pattern cannot count)")]}
NOT_EXPRESSIBLE["endpoints.join"] = {
    "Invalid": [
        ("passcode: needs a meetingid", "one parameter needs another"),
        ("meetingtype: needs a meetingid", "one parameter needs another"),
    ]
}
NOT_EXPRESSIBLE["auth.createAccessToken"] = {
    "Invalid": [("platformaccesstoken and seamaccesstoken", "the two names of one parameter must agree")]
}
NOT_EXPRESSIBLE["auditlog.list"] = {"Invalid": [("from: must not be after to", "a relation between two parameters")]}
NOT_EXPRESSIBLE["endpoints.meetings"] = {
    "Invalid": [
        ("to: must be after from", "a relation between two parameters"),
        ("to: at most 31 days after from", "a relation between two parameters"),
        ("endpoint ", "the stored room has no calendarId or calendarType"),
        ("the enterprise has no ", "no calendar account of the room's calendarType is stored"),
    ]
}
for op in ("analytics.usage", "analytics.sessions"):
    NOT_EXPRESSIBLE[op] = {
        "Invalid": [
            ("from, to: expected from < to", "a relation between two parameters (or one and now)"),
            ("from, to: at most 366 days apart", "a relation between two parameters (or one and now)"),
        ]
    }
NOT_EXPRESSIBLE["calendaraccounts.put"] = {
    "Invalid": [
        ("baseUrl: the host '", "the hosts an account may name are a setting (calendar.allowed_hosts)"),
        ("tokenUrl: the host '", "the hosts an account may name are a setting (calendar.allowed_hosts)"),
        ("tokenUrl: is required for ", "whether tokenUrl is needed depends on the path's calendarType"),
        ("tokenUrl: CALDAV accounts have none", "whether tokenUrl is allowed depends on the path's calendarType"),
    ]
}
for op in ("webhooks.create", "webhooks.update"):
    NOT_EXPRESSIBLE[op] = {
        "Invalid": [
            ("url: ", "the hosts a target may name and the addresses they resolve to are settings and DNS"),
            ("url has an invalid port", "a port from 1 to 65535 inside a URL"),
            ("url has no valid host", "a host's syntax inside a URL"),
            ("url holds spaces or control characters", "every control character in a pattern"),
        ]
    }
NOT_EXPRESSIBLE["webhooks.create"]["LimitReached"] = [
    ("The enterprise has reached its limit", "how many subscriptions the enterprise holds already")
]
NOT_EXPRESSIBLE["templates.create"] = {
    "LimitReached": [("", "how many templates the enterprise holds already")]
}
# Raw Cisco paths: which of them exist, and each one's space, are Cisco's published schemas'
# (527 paths, docs/drivers.md); the document gives their names' shape only.
for op in ("templates.create", "templates.update", "templates.patch"):
    NOT_EXPRESSIBLE.setdefault(op, {})["Invalid"] = [
        ("settings: 'cisco:", "whether a raw Cisco path is one of the published schemas' paths"),
        ("settings.cisco:", "the space the published schemas give a raw Cisco path"),
    ]
NOT_EXPRESSIBLE["templates.apply"] = {
    "Invalid": [
        ("template ", "the stored template has no settings"),
        ("rooms: the choice holds no room", "the enterprise has no room of that choice"),
    ]
}
NOT_EXPRESSIBLE["templates.reapply"] = {
    "Invalid": [("no room assigned template ", "whether the last checks found assigned rooms drifted")]
}
NOT_EXPRESSIBLE["templates.check"] = {
    "Invalid": [("template ", "how many rooms the template is assigned")]
}
NOT_EXPRESSIBLE["listenerServices.delete"] = {
    "Invalid": [("listener service ", "a listener still named by endpoints cannot go")]
}

# Schema-violating requests the service rightly accepts: operation id -> (predicate, reason).
# `X-HTTP-Method-Override: PATCH` makes a PUT a PATCH, whose body is an EndpointPatch; OpenAPI
# cannot tie a body schema to a header's value, so the PUT declares EndpointInput.
ACCEPTED_NEGATIVE = {
    "endpoints.update": (
        lambda case: str((case.headers or {}).get("X-HTTP-Method-Override", "")).strip().upper() == "PATCH",
        "X-HTTP-Method-Override: PATCH takes a PATCH body",
    ),
}

DROPPED = collections.Counter()


def operation_id(case):
    return case.operation.definition.raw.get("operationId", case.operation.label)


def catalog_error(response):
    """The response's (errorName, errorMessage), or (None, None) without a catalog body."""
    try:
        body = json.loads(response.content)
        return body.get("errorName"), body.get("errorMessage") or ""
    except (ValueError, AttributeError, TypeError):
        return None, None


def is_negative(case):
    meta = case.meta
    return meta is not None and meta.generation.mode.is_negative


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    """False (drop) only for an answer listed above, on the operation it is listed for."""
    op = operation_id(case)
    name, message = catalog_error(response)
    if "negative_data_rejection" in failure.checks and response.status_code < 400:
        listed = ACCEPTED_NEGATIVE.get(op)
        if listed and listed[0](case):
            DROPPED[(op, response.status_code, listed[1])] += 1
            return False
        return True
    if name is None:
        return True
    if response.status_code >= 500 and "not_a_server_error" in failure.checks:
        listed = SPEC_MANDATED_5XX.get(op, {}).get(name)
        if listed and (listed[1] or is_negative(case)):
            DROPPED[(op, response.status_code, name)] += 1
            return False
    if 400 <= response.status_code < 500 and "positive_data_acceptance" in failure.checks:
        for prefix, _why in NOT_EXPRESSIBLE.get(op, {}).get(name, []):
            if message.startswith(prefix):
                DROPPED[(op, response.status_code, name)] += 1
                return False
    return True


@atexit.register
def report_dropped():
    """What the lists above allowed in this run, so a reader sees what they cover."""
    if not DROPPED:
        return
    print("\nconformance hooks: answers allowed by the lists (operation, status, errorName: count)", file=sys.stderr)
    for (op, status, name), count in sorted(DROPPED.items()):
        print(f"  {op} {status} {name}: {count}", file=sys.stderr)


@schemathesis.serializer("application/vnd.ms-excel")
def excel_csv(ctx, value):
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")
