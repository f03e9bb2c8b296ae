//! The route table. Each resource answers its own methods; any other method is
//! `MethodNotAllowed` naming the allowed ones, and any unknown path is `NotFound`.

mod control;
mod csv_export;
mod docs;
mod endpoint_list;
mod endpoints;
mod enterprise;
mod listeners;
mod pairing;
mod tokens;

use crate::error::ApiError;
use actix_web::{HttpRequest, HttpResponse, Resource, web};
use roomlink_domain::{Error, ErrorKind};

/// A resource at `path` that refuses methods other than those routed, listing them.
fn resource(path: &str, allowed: &'static [&'static str]) -> Resource {
    web::resource(path).default_service(web::to(move |req: HttpRequest| async move {
        let method = req.method().to_string();
        Err::<HttpResponse, _>(ApiError(
            Error::new(
                ErrorKind::MethodNotAllowed,
                format!("{method} is not allowed here; use {}.", allowed.join(", ")),
            )
            .with("method", method)
            .with("allowed", allowed.to_vec()),
        ))
    }))
}

/// Any path no route matches.
/// The path is not echoed: it may hold a token (/api/auth/accesstokens/{token}).
pub async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError(Error::not_found(
        "Resource",
        "(the requested path)",
    )))
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/healthz", &["GET"]).route(web::get().to(enterprise::healthz)))
        .service(resource("/readyz", &["GET"]).route(web::get().to(enterprise::readyz)))
        .service(resource("/metrics", &["GET"]).route(web::get().to(crate::metrics::serve)))
        .service(resource("/api/openapi.json", &["GET"]).route(web::get().to(docs::document)))
        .service(resource("/api/docs", &["GET"]).route(web::get().to(docs::reference_root)))
        .service(
            resource("/api/docs/{file:.*}", &["GET"]).route(web::get().to(docs::reference_file)),
        )
        .service(
            resource("/api/auth/accesstokens", &["GET", "POST"])
                .route(web::post().to(tokens::create))
                .route(web::get().to(tokens::list)),
        )
        .service(
            resource("/api/auth/accesstokens/{token}", &["GET", "DELETE"])
                .route(web::get().to(tokens::get))
                .route(web::delete().to(tokens::delete)),
        )
        .service(
            resource("/api/endpoints", &["GET", "POST"])
                .route(web::get().to(endpoint_list::list))
                .route(web::post().to(endpoints::insert)),
        )
        .service(
            resource("/api/endpoints/", &["GET", "POST"])
                .route(web::get().to(endpoint_list::list))
                .route(web::post().to(endpoints::insert)),
        )
        .service(
            resource("/api/endpoints/status", &["GET"]).route(web::get().to(control::statuses)),
        )
        .service(
            resource("/api/endpoints/csv", &["GET", "PUT", "POST"])
                .route(web::get().to(csv_export::export))
                .route(web::put().to(endpoints::bulk_put))
                .route(web::post().to(endpoints::bulk_put)),
        )
        .service(
            resource("/api/endpoints/{id}", &["GET", "PUT", "PATCH", "DELETE"])
                .route(web::get().to(endpoints::get))
                .route(web::put().to(endpoints::replace))
                .route(web::patch().to(endpoints::patch))
                .route(web::delete().to(endpoints::delete)),
        )
        .service(
            resource("/api/endpoints/{id}/status", &["GET"]).route(web::get().to(control::status)),
        )
        .service(
            resource("/api/endpoints/{id}/join", &["POST"]).route(web::post().to(control::join)),
        )
        .service(
            resource("/api/endpoints/{id}/senddtmf", &["POST"])
                .route(web::post().to(control::send_dtmf)),
        )
        .service(
            resource("/api/endpoints/{id}/hangup", &["POST"])
                .route(web::post().to(control::hang_up)),
        )
        .service(
            resource("/api/endpoints/{id}/mutemicrophone", &["POST"])
                .route(web::post().to(control::mute)),
        )
        .service(
            resource("/api/endpoints/{id}/unmutemicrophone", &["POST"])
                .route(web::post().to(control::unmute)),
        )
        .service(
            resource("/api/endpoints/{id}/currentpairingcode", &["GET"])
                .route(web::get().to(pairing::current)),
        )
        .service(
            resource("/api/endpoints/{id}/pairingcode", &["GET"])
                .route(web::get().to(pairing::view)),
        )
        .service(
            resource("/api/endpoints/{id}/paired", &["GET"]).route(web::get().to(pairing::paired)),
        )
        .service(resource("/api/failures", &["GET"]).route(web::get().to(control::failures)))
        .service(resource("/api/failures/", &["GET"]).route(web::get().to(control::failures)))
        .service(
            resource("/api/enterprises/self", &["GET", "PUT"])
                .route(web::get().to(enterprise::get_self))
                .route(web::put().to(enterprise::update_self)),
        )
        .service(
            resource("/api/listenerservices", &["GET", "POST"])
                .route(web::get().to(listeners::list))
                .route(web::post().to(listeners::create)),
        )
        .service(
            resource("/api/listenerservices/{id}", &["GET", "PUT", "DELETE"])
                .route(web::get().to(listeners::get))
                .route(web::put().to(listeners::replace))
                .route(web::delete().to(listeners::delete)),
        );
}
