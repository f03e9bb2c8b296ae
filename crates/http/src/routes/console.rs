//! The web console (`/console/`, docs/console.md): static files built from `crates/http/console`
//! (`npm run build` there) and embedded in the binary, so it works with no internet and no
//! npm on the machine that runs roomlink. Not part of the interface: served, not described.
//!
//! Every answer carries a strict Content-Security-Policy (same-origin scripts, styles and
//! requests only; no inline script), `X-Content-Type-Options: nosniff`, no framing and no
//! referrer. Nothing is cached without revalidation: the asset names are fixed (their links
//! carry the sources' digest as a query, so a new build is fetched anyway).

use crate::error::ApiError;
use crate::table::{Access, Doc, Method, Operation};
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};

/// The built files: path under `/console/`, content type, bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_bytes!("../../console/dist/index.html"),
    ),
    (
        "assets/app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/dist/assets/app.js"),
    ),
    (
        "assets/app.css",
        "text/css; charset=utf-8",
        include_bytes!("../../console/dist/assets/app.css"),
    ),
];

/// Same-origin everything; `data:` images are not needed (the QR code is DOM-built SVG).
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

pub(super) const ROOT: Operation = Operation {
    method: Method::Get,
    path: "/console",
    handler: |route| route.to(root),
    access: Access::Public,
    doc: Doc::Hidden,
};

/// `/console` without the slash: the page's links are relative to `/console/`.
async fn root() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, "/console/"))
        .finish()
}

/// `/`: a person who opens the service's address in a browser lands on the console. Temporary,
/// so that a browser does not remember it should the root ever answer something else.
pub(super) const SITE_ROOT: Operation = Operation {
    method: Method::Get,
    path: "/",
    handler: |route| route.to(site_root),
    access: Access::Public,
    doc: Doc::Hidden,
};

async fn site_root() -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, "/console/"))
        .finish()
}

pub(super) const FILE: Operation = Operation {
    method: Method::Get,
    path: "/console/{file:.*}",
    handler: |route| route.to(file),
    access: Access::Public,
    doc: Doc::Hidden,
};

/// A built file by name; any other name without a dot is a page of the console (the index,
/// which routes by the URL's fragment); a missing file (a name with a dot) is the catalog's
/// `NotFound`, as for any unknown path.
async fn file(req: HttpRequest, name: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let wanted = if name.is_empty() || !name.contains('.') {
        "index.html"
    } else {
        name.as_str()
    };
    match FILES.iter().find(|(path, _, _)| *path == wanted) {
        Some((_, content_type, bytes)) => Ok(served(content_type, bytes)),
        None => Err(ApiError(super::unknown_path(&req))),
    }
}

fn served(content_type: &'static str, bytes: &'static [u8]) -> HttpResponse {
    let mut response = HttpResponse::Ok();
    response
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static(content_type)))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"));
    response.body(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use std::path::{Path, PathBuf};

    fn console_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("console")
    }

    fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files_under(&path, out);
            } else {
                out.push(path);
            }
        }
    }

    /// The digest `build.mjs` writes to `dist/sources.sha256`, computed the same way.
    fn sources_digest() -> String {
        let root = console_dir();
        let mut paths = Vec::new();
        files_under(&root.join("src"), &mut paths);
        for name in [
            "package.json",
            "package-lock.json",
            "build.mjs",
            "tsconfig.json",
        ] {
            paths.push(root.join(name));
        }
        let mut names: Vec<String> = paths
            .iter()
            .map(|p| {
                p.strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        names.sort();
        let mut hash = Sha256::new();
        for name in names {
            let bytes = std::fs::read(root.join(&name)).unwrap();
            hash.update(format!("{name}\n{}\n", bytes.len()).as_bytes());
            hash.update(&bytes);
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn the_embedded_console_is_built_from_the_current_sources() {
        let recorded = std::fs::read_to_string(console_dir().join("dist/sources.sha256")).unwrap();
        assert_eq!(
            recorded.trim(),
            sources_digest(),
            "the console's built files are stale: run `npm ci && npm run build` in crates/http/console \
             and commit crates/http/console/dist"
        );
    }

    #[test]
    fn the_index_links_only_embedded_files() {
        let index = std::str::from_utf8(FILES[0].2).unwrap();
        for (path, _, _) in &FILES[1..] {
            assert!(index.contains(&format!("/console/{path}?v=")), "{path}");
        }
        assert!(!index.contains("<script>"), "no inline script");
    }
}
