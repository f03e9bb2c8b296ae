//! What the document takes from the route table and the domain.

use super::params::query;
use crate::routes::TABLE;
use crate::routes::table::Param;

#[test]
fn every_query_parameter_of_the_table_is_described() {
    for description in TABLE.iter().filter_map(|op| op.description()) {
        for param in description.params {
            if let Param::Query(name) = param {
                assert!(query(name).is_some(), "{}: {name}", description.id);
            }
        }
    }
}
