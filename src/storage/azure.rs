//! Azure Blob Storage / ADLS Gen2: which account and container a location names, and the
//! Hadoop-style option keys Paimon users already set (`fs.azure.*`), mapped onto object_store's
//! Azure builder keys.
//!
//! Locations:
//! * `abfs[s]://<container>@<account>.dfs.core.windows.net/<path>` (Hadoop ABFS),
//! * `wasb[s]://<container>@<account>.blob.core.windows.net/<path>` (Hadoop WASB),
//! * `az://<container>/<path>`, `adl://<container>/<path>`, `abfs[s]://<container>/<path>`
//!   (fsspec style; the account then comes from `azure_storage_account_name` or the
//!   `AZURE_STORAGE_ACCOUNT_NAME` environment variable).
//!
//! Sovereign clouds (`<account>.dfs.core.chinacloudapi.cn`, ...) get the matching blob endpoint
//! `https://<account>.blob.<suffix>`. Every access goes through the Blob API.

use std::collections::HashMap;

use object_store::azure::AzureConfigKey;

use crate::error::{Error, Result};

/// The public-cloud DNS suffix of storage accounts (`<account>.<service>.core.windows.net`).
const PUBLIC_SUFFIX: &str = "core.windows.net";

/// What the authority of an Azure location names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AzureTarget {
    /// The container (ABFS: "file system").
    pub container: String,
    /// The storage account, when the authority names it.
    pub account: Option<String>,
    /// The blob endpoint, for accounts outside the public cloud.
    pub endpoint: Option<String>,
}

/// Splits an Azure authority (`container@account.dfs.core.windows.net` or `container`).
pub(crate) fn parse_authority(scheme: &str, authority: &str) -> Result<AzureTarget> {
    let invalid = |why: &str| {
        Error::InvalidArgument(format!(
            "{scheme}://{authority}: {why} (expected <container>@<account>.dfs.core.windows.net, \
             <container>@<account>.blob.core.windows.net or <container>)"
        ))
    };
    let Some((container, host)) = authority.split_once('@') else {
        if authority.contains('.') || authority.contains(':') {
            return Err(invalid("a container name has no '.' or ':'"));
        }
        return Ok(AzureTarget {
            container: authority.to_string(),
            account: None,
            endpoint: None,
        });
    };
    if container.is_empty() || container.contains('.') {
        return Err(invalid("bad container name"));
    }
    let host = host.to_ascii_lowercase();
    let mut labels = host.splitn(3, '.');
    let (Some(account), Some(service), Some(suffix)) =
        (labels.next(), labels.next(), labels.next())
    else {
        return Err(invalid("the host is not <account>.<dfs|blob>.<suffix>"));
    };
    if account.is_empty() || !matches!(service, "dfs" | "blob") || suffix.is_empty() {
        return Err(invalid("the host is not <account>.<dfs|blob>.<suffix>"));
    }
    let endpoint = (suffix != PUBLIC_SUFFIX).then(|| format!("https://{account}.blob.{suffix}"));
    Ok(AzureTarget {
        container: container.to_string(),
        account: Some(account.to_string()),
        endpoint,
    })
}

/// The first value among `keys`.
fn first<'a>(options: &'a HashMap<String, String>, keys: &[String]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| options.get(k))
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
}

/// A Hadoop ABFS per-account key and its global fallback: `<base>.<account>.dfs.core.windows.net`,
/// `<base>.<account>.blob.core.windows.net`, then `<base>`.
fn per_account(base: &str, account: Option<&str>) -> Vec<String> {
    let mut keys = Vec::new();
    if let Some(a) = account {
        for service in ["dfs", "blob"] {
            keys.push(format!("{base}.{a}.{service}.{PUBLIC_SUFFIX}"));
        }
    }
    keys.push(base.to_string());
    keys
}

/// The tenant in an OAuth token endpoint such as
/// `https://login.microsoftonline.com/<tenant>/oauth2/token`.
fn tenant_of(endpoint: &str) -> Result<String> {
    let url = url::Url::parse(endpoint.trim()).map_err(|e| {
        Error::InvalidArgument(format!(
            "option fs.azure.account.oauth2.client.endpoint '{endpoint}': {e}"
        ))
    })?;
    url.path_segments()
        .and_then(|mut s| s.next())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "option fs.azure.account.oauth2.client.endpoint '{endpoint}': no tenant in the path"
            ))
        })
}

/// The object_store settings that Hadoop-style `fs.azure.*` options (for `account` and
/// `container`) amount to, in the order they are applied:
///
/// * `fs.azure.account.key.<account>.dfs.core.windows.net` (or `.blob.`) → account key;
/// * `fs.azure.sas.fixed.token.<account>.dfs.core.windows.net`, `fs.azure.sas.fixed.token`,
///   `fs.azure.sas.<container>.<account>.blob.core.windows.net` (WASB) → SAS token;
/// * `fs.azure.account.oauth2.client.id` / `.client.secret` / `.client.endpoint` (each also per
///   account) → service principal (the tenant is read from the token endpoint).
///
/// Other `fs.azure.*` keys (tuning, auth type) are ignored.
pub(crate) fn hadoop_settings(
    options: &HashMap<String, String>,
    account: Option<&str>,
    container: &str,
) -> Result<Vec<(AzureConfigKey, String)>> {
    let mut out = Vec::new();
    if let Some(a) = account {
        out.push((AzureConfigKey::AccountName, a.to_string()));
    }
    // Only per-account keys: a bare `fs.azure.account.key` is not a Hadoop key.
    if let Some(a) = account {
        let keys: Vec<String> = ["dfs", "blob"]
            .iter()
            .map(|s| format!("fs.azure.account.key.{a}.{s}.{PUBLIC_SUFFIX}"))
            .collect();
        if let Some(k) = first(options, &keys) {
            out.push((AzureConfigKey::AccessKey, k.to_string()));
        }
    }
    let mut sas_keys = per_account("fs.azure.sas.fixed.token", account);
    if let Some(a) = account {
        sas_keys.push(format!("fs.azure.sas.{container}.{a}.blob.{PUBLIC_SUFFIX}"));
    }
    if let Some(sas) = first(options, &sas_keys) {
        out.push((
            AzureConfigKey::SasKey,
            sas.trim_start_matches('?').to_string(),
        ));
    }
    let client_id = first(
        options,
        &per_account("fs.azure.account.oauth2.client.id", account),
    );
    let client_secret = first(
        options,
        &per_account("fs.azure.account.oauth2.client.secret", account),
    );
    let token_endpoint = first(
        options,
        &per_account("fs.azure.account.oauth2.client.endpoint", account),
    );
    if let Some(id) = client_id {
        out.push((AzureConfigKey::ClientId, id.to_string()));
    }
    if let Some(secret) = client_secret {
        out.push((AzureConfigKey::ClientSecret, secret.to_string()));
    }
    if let Some(endpoint) = token_endpoint {
        out.push((AzureConfigKey::AuthorityId, tenant_of(endpoint)?));
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

    #[test]
    fn authorities() {
        assert_eq!(
            parse_authority("abfss", "wh@acct.dfs.core.windows.net").unwrap(),
            AzureTarget {
                container: "wh".into(),
                account: Some("acct".into()),
                endpoint: None
            }
        );
        assert_eq!(
            parse_authority("wasbs", "wh@acct.blob.core.windows.net").unwrap(),
            AzureTarget {
                container: "wh".into(),
                account: Some("acct".into()),
                endpoint: None
            }
        );
        assert_eq!(
            parse_authority("abfss", "wh@acct.dfs.core.chinacloudapi.cn")
                .unwrap()
                .endpoint
                .as_deref(),
            Some("https://acct.blob.core.chinacloudapi.cn")
        );
        assert_eq!(
            parse_authority("az", "wh").unwrap(),
            AzureTarget {
                container: "wh".into(),
                account: None,
                endpoint: None
            }
        );
        for bad in [
            "wh@acct",
            "wh@acct.queue.core.windows.net",
            "@acct.dfs.core.windows.net",
            "a.b@acct.dfs.core.windows.net",
            "acct.blob.core.windows.net",
            "wh@.dfs.core.windows.net",
        ] {
            assert!(
                matches!(
                    parse_authority("abfss", bad),
                    Err(Error::InvalidArgument(_))
                ),
                "{bad}"
            );
        }
    }

    fn find(s: &[(AzureConfigKey, String)], k: AzureConfigKey) -> Option<&str> {
        s.iter().find(|(key, _)| *key == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn hadoop_account_key_and_sas() {
        let options = opts(&[
            ("fs.azure.account.key.acct.dfs.core.windows.net", "S0VZ"),
            (
                "fs.azure.account.key.other.dfs.core.windows.net",
                "T1RIRVI=",
            ),
        ]);
        let s = hadoop_settings(&options, Some("acct"), "wh").unwrap();
        assert_eq!(find(&s, AzureConfigKey::AccountName), Some("acct"));
        assert_eq!(find(&s, AzureConfigKey::AccessKey), Some("S0VZ"));
        assert_eq!(find(&s, AzureConfigKey::SasKey), None);
        let options = opts(&[(
            "fs.azure.account.key.acct.blob.core.windows.net",
            "QkxPQg==",
        )]);
        let s = hadoop_settings(&options, Some("acct"), "wh").unwrap();
        assert_eq!(find(&s, AzureConfigKey::AccessKey), Some("QkxPQg=="));
        // No account known: an account key cannot be picked.
        assert!(hadoop_settings(&options, None, "wh").unwrap().is_empty());

        let options = opts(&[("fs.azure.sas.wh.acct.blob.core.windows.net", "?sv=1&sig=x")]);
        let s = hadoop_settings(&options, Some("acct"), "wh").unwrap();
        assert_eq!(find(&s, AzureConfigKey::SasKey), Some("sv=1&sig=x"));
        let options = opts(&[("fs.azure.sas.fixed.token", "sv=2&sig=y")]);
        let s = hadoop_settings(&options, Some("acct"), "wh").unwrap();
        assert_eq!(find(&s, AzureConfigKey::SasKey), Some("sv=2&sig=y"));
        let options = opts(&[
            ("fs.azure.sas.fixed.token", "sv=2&sig=global"),
            (
                "fs.azure.sas.fixed.token.acct.dfs.core.windows.net",
                "sv=2&sig=acct",
            ),
        ]);
        let s = hadoop_settings(&options, Some("acct"), "wh").unwrap();
        assert_eq!(find(&s, AzureConfigKey::SasKey), Some("sv=2&sig=acct"));
    }

    #[test]
    fn hadoop_oauth_client_credentials() {
        let options = opts(&[
            ("fs.azure.account.auth.type", "OAuth"),
            ("fs.azure.account.oauth2.client.id", "cid"),
            (
                "fs.azure.account.oauth2.client.secret.acct.dfs.core.windows.net",
                "sec",
            ),
            (
                "fs.azure.account.oauth2.client.endpoint",
                "https://login.microsoftonline.com/tenant-1/oauth2/token",
            ),
        ]);
        let s = hadoop_settings(&options, Some("acct"), "wh").unwrap();
        assert_eq!(find(&s, AzureConfigKey::ClientId), Some("cid"));
        assert_eq!(find(&s, AzureConfigKey::ClientSecret), Some("sec"));
        assert_eq!(find(&s, AzureConfigKey::AuthorityId), Some("tenant-1"));
        let options = opts(&[("fs.azure.account.oauth2.client.endpoint", "not a url")]);
        assert!(hadoop_settings(&options, Some("acct"), "wh").is_err());
    }
}
