//! The OpenAPI document: committed copy up to date, every operation complete with the roles it
//! needs, every reference resolved, every field of the endpoint table in the endpoint schemas.
//! That every route is described or explicitly hidden is the route table's own test
//! (`src/routes/tests.rs`): the document and the actix resources are built from that table.

use roomlink_domain::endpoint::Field;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn document() -> Value {
    serde_json::from_str(&roomlink_http::openapi_json()).expect("the document is JSON")
}

#[test]
fn the_committed_document_is_up_to_date() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    let committed = std::fs::read_to_string(&committed).unwrap_or_default();
    let current = roomlink_http::openapi_json();
    assert!(
        committed == current,
        "docs/openapi.json is stale: run `cargo xtask openapi`"
    );
}

#[test]
fn operations_are_complete() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    let mut ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            let id = op["operationId"].as_str().expect("an operationId");
            assert!(ids.insert(id.to_owned()), "operationId {id} is used twice");
            let responses = op["responses"].as_object().expect("responses");
            for status in ["429", "431", "500"] {
                assert!(
                    responses.contains_key(status),
                    "{method} {path}: no {status}"
                );
            }
            // 101: the listener's WebSocket upgrade.
            assert!(
                responses.keys().any(|s| s.starts_with('2') || s == "101"),
                "{method} {path}: no success response"
            );
            let public = op.get("security") == Some(&Value::Array(vec![]));
            assert_eq!(
                responses.contains_key("401"),
                !public,
                "{method} {path}: 401 exactly when credentials are needed"
            );
            // Callers with the default credentials are those whose roles the domain checks.
            let roles = op.get("x-roles").and_then(Value::as_array);
            assert_eq!(
                roles.is_some(),
                op.get("security").is_none(),
                "{method} {path}: roles stated exactly for callers"
            );
            for role in roles.into_iter().flatten() {
                let role = role.as_str().expect("a role name");
                assert!(
                    roomlink_domain::access::Role::parse(role).is_ok(),
                    "{method} {path}: {role}"
                );
                let description = op["description"].as_str().expect("a description");
                assert!(
                    description.contains("**Roles:**") && description.contains(role),
                    "{method} {path}: the description names {role}"
                );
            }
            for param in op["parameters"].as_array().into_iter().flatten() {
                if param["in"] == "path" {
                    let name = param["name"].as_str().expect("a name");
                    assert!(path.contains(&format!("{{{name}}}")), "{path}: {name}");
                }
            }
        }
    }
}

/// Every `$ref` names a component that exists.
#[test]
fn references_resolve() {
    fn walk(value: &Value, doc: &Value, seen: &mut usize) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    let pointer = target.strip_prefix('#').expect("a local reference");
                    assert!(doc.pointer(pointer).is_some(), "{target} does not resolve");
                    *seen += 1;
                }
                map.values().for_each(|v| walk(v, doc, seen));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, doc, seen)),
            _ => {}
        }
    }
    let doc = document();
    let mut seen = 0;
    walk(&doc, &doc, &mut seen);
    assert!(seen > 50, "{seen} references");
}

/// Links name existing operations and parameters they have.
#[test]
fn links_resolve() {
    let doc = document();
    let mut operations = std::collections::BTreeMap::new();
    for item in doc["paths"].as_object().expect("paths").values() {
        for op in item.as_object().expect("a path item").values() {
            operations.insert(op["operationId"].as_str().expect("an id").to_owned(), op);
        }
    }
    let mut links = 0;
    for op in operations.values() {
        for response in op["responses"].as_object().expect("responses").values() {
            for link in response["links"]
                .as_object()
                .into_iter()
                .flat_map(|l| l.values())
            {
                let target = link["operationId"].as_str().expect("a link's operationId");
                let target = operations.get(target).expect("an existing operation");
                for name in link["parameters"].as_object().expect("parameters").keys() {
                    assert!(
                        target["parameters"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|p| p["name"] == name.as_str()),
                        "{name}"
                    );
                }
                links += 1;
            }
        }
    }
    assert!(links >= 10, "{links} links");
}

#[test]
fn endpoint_schemas_follow_the_field_table() {
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    let response = schemas["Endpoint"]["properties"]
        .as_object()
        .expect("Endpoint properties");
    let input = schemas["EndpointInput"]["properties"]
        .as_object()
        .expect("EndpointInput properties");
    let mut expected: BTreeSet<&str> = Field::ALL.iter().map(|f| f.json_name()).collect();
    expected.extend(["id", "password"]);
    assert_eq!(
        response.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        expected
    );
    for field in Field::ALL {
        assert!(input.contains_key(field.json_name()), "{field:?}");
    }
    assert_eq!(
        schemas["EndpointInput"]["required"],
        serde_json::json!(["name"])
    );
    assert_eq!(
        schemas["Endpoint"]["properties"]["password"]["type"],
        "null"
    );
}

/// Each error status lists exactly the catalog entries of that status.
#[test]
fn error_responses_come_from_the_catalog() {
    let doc = document();
    for (name, response) in doc["components"]["responses"]
        .as_object()
        .expect("responses")
    {
        let status: u16 = name["Error".len()..name.find('_').expect("a status")]
            .parse()
            .expect("a status");
        let schema = &response["content"]["application/json"]["schema"]["allOf"][1];
        let names = schema["properties"]["errorName"]["enum"]
            .as_array()
            .expect("errorName values");
        for error_name in names {
            let kind = roomlink_domain::ErrorKind::ALL
                .iter()
                .find(|k| k.name() == error_name)
                .unwrap_or_else(|| panic!("{error_name} is not in the catalog"));
            assert_eq!(kind.status(), status, "{name}: {error_name}");
        }
    }
}
