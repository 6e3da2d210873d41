//! The web client's files (`web/` in the repository), embedded in the binary so that a
//! fresh clone serves the client with nothing else installed: the page, its style and icon,
//! and `web/dist/app.js`, the bundle `web/build.mjs` makes of `web/src/` (checked in; a test
//! fails when it is not what the source builds to).

/// One embedded file.
pub struct Asset {
    /// Its name under `/assets/`.
    pub name: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $file:literal, $content_type:literal) => {
        Asset {
            name: $name,
            content_type: $content_type,
            body: include_bytes!(concat!("../../../web/", $file)),
        }
    };
}

const INDEX: Asset = asset!("index.html", "index.html", "text/html; charset=utf-8");

/// Everything under `/assets/`.
const ASSETS: &[Asset] = &[
    asset!("app.css", "app.css", "text/css; charset=utf-8"),
    asset!("app.js", "dist/app.js", "text/javascript; charset=utf-8"),
    asset!("icon.svg", "icon.svg", "image/svg+xml"),
];

/// The page at `/`.
pub fn index() -> &'static Asset {
    &INDEX
}

/// The asset named `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|asset| asset.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_and_style_the_page_names_is_embedded() {
        let page = std::str::from_utf8(index().body).unwrap();
        for reference in page.split("/assets/").skip(1) {
            let name = reference.split('"').next().unwrap();
            assert!(find(name).is_some(), "{name} is not embedded");
        }
        // The bundle imports nothing: the page loads one script.
        let app = std::str::from_utf8(find("app.js").unwrap().body).unwrap();
        assert!(!app.contains("from \"./"), "app.js is one bundle");
        assert!(find("../Cargo.toml").is_none());
    }
}
