//! The web client's files (`web/` in the repository), embedded in the binary so that a
//! fresh clone serves the client with nothing else installed.

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
    ($name:literal, $content_type:literal) => {
        Asset {
            name: $name,
            content_type: $content_type,
            body: include_bytes!(concat!("../../../web/", $name)),
        }
    };
}

const INDEX: Asset = asset!("index.html", "text/html; charset=utf-8");

/// Everything under `/assets/`.
const ASSETS: &[Asset] = &[
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("icon.svg", "image/svg+xml"),
    asset!("rpc.js", "text/javascript; charset=utf-8"),
    asset!("state.js", "text/javascript; charset=utf-8"),
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
        // The modules app.js imports, too.
        let app = std::str::from_utf8(find("app.js").unwrap().body).unwrap();
        for line in app.lines().filter(|l| l.contains("from \"./")) {
            let name = line
                .split("from \"./")
                .nth(1)
                .unwrap()
                .trim_end_matches("\";");
            assert!(find(name).is_some(), "{name} is not embedded");
        }
        assert!(find("../Cargo.toml").is_none());
    }
}
