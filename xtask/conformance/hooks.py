"""schemathesis hooks for `cargo xtask conformance`.

- `catalog_server_error`: a 5xx must be a catalog error other than InternalError and
  StorageUnavailable. The specification answers some failures with 5xx on purpose (a listener
  that is offline is ListenerOffline, 503); whether the operation documents that entry is
  response_schema_conformance's job. An unexpected failure of roomlink itself is never fine.
- A serializer for `application/vnd.ms-excel`, one of the CSV upload's content types: the
  body is the same CSV text.
"""

import json

import schemathesis

UNEXPECTED = {"InternalError", "StorageUnavailable"}


@schemathesis.check
def catalog_server_error(ctx, response, case):
    if response.status_code < 500:
        return None
    try:
        name = json.loads(response.content).get("errorName")
    except (ValueError, AttributeError):
        name = None
    if name is None:
        raise AssertionError(f"{response.status_code} without a catalog error body")
    if name in UNEXPECTED:
        raise AssertionError(f"{response.status_code} {name}: roomlink failed unexpectedly")
    return None


@schemathesis.serializer("application/vnd.ms-excel")
def excel_csv(ctx, value):
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")
