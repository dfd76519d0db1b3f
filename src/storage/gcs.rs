//! Google Cloud Storage: the Hadoop GCS connector's option keys Paimon users already set
//! (`fs.gs.*`), mapped onto object_store's GCS builder keys.

use std::collections::HashMap;

use object_store::gcp::GoogleConfigKey;

use crate::error::{Error, Result};

/// The GCS connector's default storage root; any other value names an endpoint object_store can
/// only be pointed at through `gcs_base_url` in a service-account file.
const DEFAULT_ROOT_URL: &str = "https://storage.googleapis.com";

fn get<'a>(options: &'a HashMap<String, String>, key: &str) -> Option<&'a str> {
    options.get(key).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// The object_store settings that the GCS options amount to:
///
/// * `gcs.service-account-path`, `fs.gs.auth.service.account.json.keyfile`,
///   `google.cloud.auth.service.account.json.keyfile` (connector 1.x) → service-account file;
/// * `fs.gs.auth.service.account.email` + `.private.key.id` + `.private.key` → an inline
///   service-account key;
/// * `fs.gs.auth.type`: `UNAUTHENTICATED` → unsigned requests; `SERVICE_ACCOUNT_JSON_KEYFILE`,
///   `APPLICATION_DEFAULT`, `COMPUTE_ENGINE` → the credential chain; anything else is an error;
/// * `fs.gs.storage.root.url` other than the default is refused: object_store takes a custom
///   endpoint only as `gcs_base_url` inside a service-account file, and silently talking to
///   the public endpoint instead would be wrong.
///
/// Other `fs.gs.*` keys (project id, tuning) are ignored.
pub(crate) fn hadoop_settings(
    options: &HashMap<String, String>,
) -> Result<Vec<(GoogleConfigKey, String)>> {
    let mut out = Vec::new();
    let keyfile = [
        "gcs.service-account-path",
        "fs.gs.auth.service.account.json.keyfile",
        "google.cloud.auth.service.account.json.keyfile",
    ]
    .iter()
    .find_map(|k| get(options, k));
    if let Some(path) = keyfile {
        out.push((GoogleConfigKey::ServiceAccount, path.to_string()));
    }
    let email = get(options, "fs.gs.auth.service.account.email");
    let key_id = get(options, "fs.gs.auth.service.account.private.key.id");
    let key = get(options, "fs.gs.auth.service.account.private.key");
    match (email, key_id, key) {
        (None, None, None) => {}
        (Some(email), Some(key_id), Some(key)) => {
            if keyfile.is_some() {
                return Err(Error::InvalidArgument(
                    "GCS options name both a service-account key file and an inline \
                     fs.gs.auth.service.account.private.key"
                        .into(),
                ));
            }
            // The connector reads the PEM with literal "\n" escapes as often as with newlines.
            let json = serde_json::json!({
                "client_email": email,
                "private_key_id": key_id,
                "private_key": key.replace("\\n", "\n"),
            });
            out.push((GoogleConfigKey::ServiceAccountKey, json.to_string()));
        }
        _ => {
            return Err(Error::InvalidArgument(
                "fs.gs.auth.service.account.email, .private.key.id and .private.key go together"
                    .into(),
            ))
        }
    }
    if let Some(t) = get(options, "fs.gs.auth.type") {
        match t.to_ascii_uppercase().as_str() {
            "UNAUTHENTICATED" => out.push((GoogleConfigKey::SkipSignature, "true".into())),
            "SERVICE_ACCOUNT_JSON_KEYFILE" | "APPLICATION_DEFAULT" | "COMPUTE_ENGINE" => {}
            other => {
                return Err(Error::Unsupported(format!(
                    "option fs.gs.auth.type: '{other}' is not supported (UNAUTHENTICATED, \
                     SERVICE_ACCOUNT_JSON_KEYFILE, APPLICATION_DEFAULT, COMPUTE_ENGINE)"
                )))
            }
        }
    }
    if let Some(root) = get(options, "fs.gs.storage.root.url") {
        if root.trim_end_matches('/') != DEFAULT_ROOT_URL {
            return Err(Error::Unsupported(format!(
                "option fs.gs.storage.root.url '{root}': a custom GCS endpoint is set as \
                 \"gcs_base_url\" in the service-account file (with \"disable_oauth\": true \
                 for an emulator)"
            )));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kv: &[(&str, &str)]) -> HashMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn find(s: &[(GoogleConfigKey, String)], k: GoogleConfigKey) -> Option<&str> {
        s.iter().find(|(key, _)| *key == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn keyfile_keys() {
        for k in [
            "gcs.service-account-path",
            "fs.gs.auth.service.account.json.keyfile",
            "google.cloud.auth.service.account.json.keyfile",
        ] {
            let s = hadoop_settings(&opts(&[(k, "/etc/sa.json")])).unwrap();
            assert_eq!(
                find(&s, GoogleConfigKey::ServiceAccount),
                Some("/etc/sa.json"),
                "{k}"
            );
        }
        assert!(hadoop_settings(&HashMap::new()).unwrap().is_empty());
    }

    #[test]
    fn inline_key_and_auth_type() {
        let s = hadoop_settings(&opts(&[
            (
                "fs.gs.auth.service.account.email",
                "sa@p.iam.gserviceaccount.com",
            ),
            ("fs.gs.auth.service.account.private.key.id", "kid"),
            (
                "fs.gs.auth.service.account.private.key",
                "-----BEGIN PRIVATE KEY-----\\nAAA\\n-----END PRIVATE KEY-----\\n",
            ),
            ("fs.gs.auth.type", "SERVICE_ACCOUNT_JSON_KEYFILE"),
        ]))
        .unwrap();
        let json: serde_json::Value =
            serde_json::from_str(find(&s, GoogleConfigKey::ServiceAccountKey).unwrap()).unwrap();
        assert_eq!(json["client_email"], "sa@p.iam.gserviceaccount.com");
        assert_eq!(json["private_key_id"], "kid");
        assert_eq!(
            json["private_key"],
            "-----BEGIN PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY-----\n"
        );
        assert!(hadoop_settings(&opts(&[("fs.gs.auth.service.account.email", "x")])).is_err());

        let s = hadoop_settings(&opts(&[("fs.gs.auth.type", "unauthenticated")])).unwrap();
        assert_eq!(find(&s, GoogleConfigKey::SkipSignature), Some("true"));
        assert!(matches!(
            hadoop_settings(&opts(&[("fs.gs.auth.type", "USER_CREDENTIALS")])),
            Err(Error::Unsupported(_))
        ));
    }

    #[test]
    fn custom_root_url_is_refused() {
        assert!(hadoop_settings(&opts(&[(
            "fs.gs.storage.root.url",
            "https://storage.googleapis.com/"
        )]))
        .unwrap()
        .is_empty());
        assert!(matches!(
            hadoop_settings(&opts(&[(
                "fs.gs.storage.root.url",
                "http://127.0.0.1:9023"
            )])),
            Err(Error::Unsupported(_))
        ));
    }
}
