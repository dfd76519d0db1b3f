//! Storage options: retries, timeouts and the object-store builders fed from the options map.
//!
//! Keys understood (all optional; unknown keys are ignored, except that every key starting with
//! `aws_`, `google_` or `azure_` must be a valid object_store config key of that store):
//!
//! | key | meaning | default |
//! |---|---|---|
//! | `storage.retry.max-retries` | retries of one object-store request | 10 |
//! | `storage.retry.timeout` | give up retrying after this long (Paimon duration, e.g. `3 min`) | 3 min |
//! | `storage.retry.init-backoff` | first backoff | 100 ms |
//! | `storage.retry.max-backoff` | backoff cap | 15 s |
//! | `storage.request-timeout` | timeout of one HTTP request | object_store's |
//! | `storage.connect-timeout` | TCP connect timeout | object_store's |
//! | `s3.endpoint`, `fs.s3a.endpoint` | S3 endpoint (`https://` assumed without scheme) | AWS |
//! | `s3.region`, `fs.s3a.endpoint.region`, `fs.s3a.region` | region | AWS_REGION or `us-east-1` |
//! | `s3.access-key`, `s3.access.key`, `fs.s3a.access.key` | access key id | env / instance profile |
//! | `s3.secret-key`, `s3.secret.key`, `fs.s3a.secret.key` | secret key | |
//! | `s3.session-token`, `s3.session.token`, `fs.s3a.session.token` | session token | |
//! | `s3.path-style-access`, `s3.path.style.access`, `fs.s3a.path.style.access` | path-style requests | path style |
//! | `s3.allow-http` | allow plain HTTP | true iff the endpoint is `http://` |
//! | `fs.oss.endpoint`, `fs.oss.accessKeyId`, `fs.oss.accessKeySecret`, `fs.oss.securityToken` | `oss://` through OSS's S3-compatible API | |
//! | `aws_*`, `google_*`, `azure_*` | passed to the builder's `with_config` (win over the Hadoop-style keys for GCS and Azure) | |
//! | `fs.gs.*`, `gcs.service-account-path` | GCS credentials (see `storage::gcs`) | env / metadata server |
//! | `fs.azure.*` | Azure account key, SAS, service principal (see `storage::azure`) | env / managed identity |
//!
//! docs/storage.md lists every scheme and key with the test that covers it.

use std::collections::HashMap;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::spec::options::parse_duration;

/// Option key: maximum retries of one object-store request.
pub const RETRY_MAX_RETRIES: &str = "storage.retry.max-retries";
/// Option key: total time after which a request is no longer retried.
pub const RETRY_TIMEOUT: &str = "storage.retry.timeout";
/// Option key: initial retry backoff.
pub const RETRY_INIT_BACKOFF: &str = "storage.retry.init-backoff";
/// Option key: maximum retry backoff.
pub const RETRY_MAX_BACKOFF: &str = "storage.retry.max-backoff";
/// Option key: timeout of a single HTTP request.
pub const REQUEST_TIMEOUT: &str = "storage.request-timeout";
/// Option key: TCP connect timeout.
pub const CONNECT_TIMEOUT: &str = "storage.connect-timeout";

/// Retry policy for object-store requests (mirrors object_store's `RetryConfig`, which only
/// exists when a cloud feature is compiled in).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RetrySettings {
    pub max_retries: usize,
    pub timeout: Duration,
    pub init_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            max_retries: 10,
            timeout: Duration::from_secs(180),
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(15),
        }
    }
}

/// Everything needed to open a store, validated once at [`crate::storage::Storage::open`].
#[derive(Clone)]
pub(crate) struct StoreConfig {
    pub options: HashMap<String, String>,
    pub retry: RetrySettings,
    pub request_timeout: Option<Duration>,
    pub connect_timeout: Option<Duration>,
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print option values: they may hold credentials.
        let mut keys: Vec<&String> = self.options.keys().collect();
        keys.sort();
        f.debug_struct("StoreConfig")
            .field("option_keys", &keys)
            .field("retry", &self.retry)
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

/// Largest `storage.retry.max-retries`.
pub const MAX_RETRIES: usize = 1000;
/// Largest value of the storage durations (retry timeout and backoffs, request and connect
/// timeouts): 7 days. A larger one would overflow the HTTP client's deadlines.
pub const MAX_STORAGE_DURATION: Duration = Duration::from_secs(7 * 24 * 3600);

/// True for option keys whose values are credentials (secret keys, passwords, tokens, account
/// keys, SAS, private keys, credential files' contents): their values are never printed, and
/// the CLI warns when one is given directly on its command line. Access key ids are not
/// secrets by this rule.
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "secret",
        "password",
        "token",
        "account.key",
        "account-key",
        "account_key",
        "credential",
        "sas",
        "private",
    ]
    .iter()
    .any(|s| k.contains(s))
}

fn parse_duration_opt(options: &HashMap<String, String>, key: &str) -> Result<Option<Duration>> {
    match options.get(key) {
        None => Ok(None),
        Some(v) => {
            let d = parse_duration(v)
                .map_err(|e| Error::InvalidArgument(format!("option {key}: {e}")))?;
            if d > MAX_STORAGE_DURATION {
                return Err(Error::InvalidArgument(format!(
                    "option {key}: '{v}' is longer than 7 d"
                )));
            }
            Ok(Some(d))
        }
    }
}

/// Parses a boolean option value the way Hadoop/Paimon do (case-insensitive `true`/`false`).
#[cfg_attr(not(feature = "s3"), allow(dead_code))]
fn parse_bool(key: &str, v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Error::InvalidArgument(format!(
            "option {key}: '{v}' is not a boolean"
        ))),
    }
}

impl StoreConfig {
    /// Validates the generic storage options.
    pub fn new(options: &HashMap<String, String>) -> Result<StoreConfig> {
        let mut retry = RetrySettings::default();
        if let Some(v) = options.get(RETRY_MAX_RETRIES) {
            retry.max_retries = v
                .trim()
                .parse()
                .ok()
                .filter(|n| *n <= MAX_RETRIES)
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "option {RETRY_MAX_RETRIES}: '{v}' is not an integer from 0 to {MAX_RETRIES}"
                    ))
                })?;
        }
        if let Some(d) = parse_duration_opt(options, RETRY_TIMEOUT)? {
            retry.timeout = d;
        }
        if let Some(d) = parse_duration_opt(options, RETRY_INIT_BACKOFF)? {
            retry.init_backoff = d;
        }
        if let Some(d) = parse_duration_opt(options, RETRY_MAX_BACKOFF)? {
            retry.max_backoff = d;
        }
        if retry.init_backoff > retry.max_backoff {
            return Err(Error::InvalidArgument(format!(
                "option {RETRY_INIT_BACKOFF} ({:?}) exceeds {RETRY_MAX_BACKOFF} ({:?})",
                retry.init_backoff, retry.max_backoff
            )));
        }
        Ok(StoreConfig {
            options: options.clone(),
            retry,
            request_timeout: parse_duration_opt(options, REQUEST_TIMEOUT)?,
            connect_timeout: parse_duration_opt(options, CONNECT_TIMEOUT)?,
        })
    }

    /// The first value present among `keys`.
    #[cfg_attr(not(any(feature = "s3", feature = "azure")), allow(dead_code))]
    fn first(&self, keys: &[&str]) -> Option<&str> {
        keys.iter()
            .find_map(|k| self.options.get(*k))
            .map(String::as_str)
    }

    /// Options whose key starts with `prefix`, sorted by key (deterministic builder order).
    #[cfg_attr(
        not(any(feature = "s3", feature = "gcs", feature = "azure")),
        allow(dead_code)
    )]
    fn with_prefix(&self, prefix: &str) -> Vec<(&str, &str)> {
        let mut v: Vec<(&str, &str)> = self
            .options
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        v.sort();
        v
    }

    #[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
    fn retry_config(&self) -> object_store::RetryConfig {
        object_store::RetryConfig {
            backoff: object_store::BackoffConfig {
                init_backoff: self.retry.init_backoff,
                max_backoff: self.retry.max_backoff,
                base: 2.0,
            },
            max_retries: self.retry.max_retries,
            retry_timeout: self.retry.timeout,
        }
    }

    #[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
    fn client_options(&self) -> object_store::ClientOptions {
        let mut c = object_store::ClientOptions::new();
        if let Some(t) = self.request_timeout {
            c = c.with_timeout(t);
        }
        if let Some(t) = self.connect_timeout {
            c = c.with_connect_timeout(t);
        }
        c
    }
}

/// Error for a store that cannot be built from the given options.
#[cfg_attr(
    not(any(feature = "s3", feature = "gcs", feature = "azure")),
    allow(dead_code)
)]
fn build_error(base: &str, e: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("cannot open object store {base}: {e}"))
}

/// Builds the object store serving `scheme://authority` (`base`, e.g. `s3://bucket`).
pub(crate) fn build_object_store(
    scheme: &str,
    authority: &str,
    base: &str,
    config: &StoreConfig,
) -> Result<std::sync::Arc<dyn object_store::ObjectStore>> {
    let _ = (authority, config);
    match scheme {
        "memory" => Ok(memory_store(authority)),
        "s3" | "oss" => {
            #[cfg(feature = "s3")]
            {
                build_s3(scheme, authority, base, config)
            }
            #[cfg(not(feature = "s3"))]
            {
                Err(Error::Unsupported(format!(
                    "{base}: this build has no S3 support (cargo feature \"s3\")"
                )))
            }
        }
        "gs" => {
            #[cfg(feature = "gcs")]
            {
                build_gcs(authority, base, config)
            }
            #[cfg(not(feature = "gcs"))]
            {
                Err(Error::Unsupported(format!(
                    "{base}: this build has no GCS support (cargo feature \"gcs\")"
                )))
            }
        }
        "az" | "adl" | "abfs" | "abfss" | "wasb" | "wasbs" => {
            #[cfg(feature = "azure")]
            {
                build_azure(scheme, authority, base, config)
            }
            #[cfg(not(feature = "azure"))]
            {
                Err(Error::Unsupported(format!(
                    "{base}: this build has no Azure support (cargo feature \"azure\")"
                )))
            }
        }
        other => Err(Error::Unsupported(format!(
            "{base}: unsupported storage scheme '{other}'"
        ))),
    }
}

/// `memory://<authority>` stores are process-wide, so that every [`crate::storage::Storage`]
/// opened on the same memory location sees the same objects (handy for tests of upper layers).
fn memory_store(authority: &str) -> std::sync::Arc<dyn object_store::ObjectStore> {
    use std::sync::{Arc, Mutex, OnceLock};
    static STORES: OnceLock<Mutex<HashMap<String, Arc<object_store::memory::InMemory>>>> =
        OnceLock::new();
    let map = STORES.get_or_init(Default::default);
    let mut map = map.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    map.entry(authority.to_string())
        .or_insert_with(|| Arc::new(object_store::memory::InMemory::new()))
        .clone()
}

/// Puts `https://` in front of an endpoint given without a scheme (Hadoop style `host:port`).
#[cfg(feature = "s3")]
fn normalize_endpoint(endpoint: &str, ssl: bool) -> String {
    let e = endpoint.trim().trim_end_matches('/');
    if e.contains("://") {
        e.to_string()
    } else if ssl {
        format!("https://{e}")
    } else {
        format!("http://{e}")
    }
}

/// object_store expects a virtual-hosted endpoint to already contain the bucket; Hadoop-style
/// endpoints do not, so insert it as a sub-domain.
#[cfg(feature = "s3")]
fn virtual_hosted_endpoint(endpoint: &str, bucket: &str) -> Result<String> {
    let mut url = url::Url::parse(endpoint)
        .map_err(|e| Error::InvalidArgument(format!("S3 endpoint '{endpoint}': {e}")))?;
    let host = url
        .host_str()
        .ok_or_else(|| Error::InvalidArgument(format!("S3 endpoint '{endpoint}' has no host")))?
        .to_string();
    if host.starts_with(&format!("{bucket}.")) {
        return Ok(endpoint.to_string());
    }
    url.set_host(Some(&format!("{bucket}.{host}")))
        .map_err(|e| Error::InvalidArgument(format!("S3 endpoint '{endpoint}': {e}")))?;
    Ok(url.as_str().trim_end_matches('/').to_string())
}

#[cfg(feature = "s3")]
fn build_s3(
    scheme: &str,
    bucket: &str,
    base: &str,
    config: &StoreConfig,
) -> Result<std::sync::Arc<dyn object_store::ObjectStore>> {
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
    use std::str::FromStr;

    let oss = scheme == "oss";
    let mut b = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_retry(config.retry_config())
        .with_client_options(config.client_options());
    for (k, v) in config.with_prefix("aws_") {
        let key = AmazonS3ConfigKey::from_str(k)
            .map_err(|e| Error::InvalidArgument(format!("option {k}: {e}")))?;
        b = b.with_config(key, v);
    }

    let pick = |s3_keys: &[&str], oss_keys: &[&str]| -> Option<String> {
        let from_oss = if oss { config.first(oss_keys) } else { None };
        from_oss
            .or_else(|| config.first(s3_keys))
            .map(str::to_string)
    };
    let ssl = match config.first(&["fs.s3a.connection.ssl.enabled"]) {
        Some(v) => parse_bool("fs.s3a.connection.ssl.enabled", v)?,
        None => true,
    };
    let endpoint = pick(
        &["s3.endpoint", "fs.s3a.endpoint", "s3.endpoint-url"],
        &["fs.oss.endpoint", "oss.endpoint"],
    )
    .map(|e| normalize_endpoint(&e, ssl));
    if let Some(region) = pick(
        &["s3.region", "fs.s3a.endpoint.region", "fs.s3a.region"],
        &["fs.oss.region", "oss.region"],
    ) {
        b = b.with_region(region);
    }
    let access_key = pick(
        &["s3.access-key", "s3.access.key", "fs.s3a.access.key"],
        &["fs.oss.accessKeyId", "oss.access-key"],
    );
    // No key in the options or the environment: the AWS shared credentials file, which
    // object_store's chain skips (then web identity, ECS, instance metadata as object_store does).
    if !oss && access_key.is_none() && !config.options.contains_key("aws_access_key_id") {
        if let Some(k) = super::aws_profile::profile_keys(|k| std::env::var(k).ok())? {
            b = b
                .with_access_key_id(k.access_key_id)
                .with_secret_access_key(k.secret_access_key);
            if let Some(t) = k.session_token {
                b = b.with_token(t);
            }
        }
    }
    if let Some(v) = access_key {
        b = b.with_access_key_id(v);
    }
    if let Some(v) = pick(
        &["s3.secret-key", "s3.secret.key", "fs.s3a.secret.key"],
        &["fs.oss.accessKeySecret", "oss.secret-key"],
    ) {
        b = b.with_secret_access_key(v);
    }
    if let Some(v) = pick(
        &[
            "s3.session-token",
            "s3.session.token",
            "fs.s3a.session.token",
        ],
        &["fs.oss.securityToken", "oss.session-token"],
    ) {
        b = b.with_token(v);
    }
    let path_style_keys = [
        "s3.path-style-access",
        "s3.path.style.access",
        "fs.s3a.path.style.access",
    ];
    let path_style = match path_style_keys
        .iter()
        .find_map(|k| config.options.get(*k).map(|v| (*k, v)))
    {
        Some((k, v)) => Some(parse_bool(k, v)?),
        // OSS only serves virtual-hosted requests.
        None if oss => Some(false),
        None => None,
    };
    if let Some(path_style) = path_style {
        b = b.with_virtual_hosted_style_request(!path_style);
    }
    let allow_http = match config.options.get("s3.allow-http") {
        Some(v) => parse_bool("s3.allow-http", v)?,
        None => endpoint
            .as_deref()
            .is_some_and(|e| e.to_ascii_lowercase().starts_with("http://")),
    };
    if allow_http {
        b = b.with_allow_http(true);
    }
    if let Some(endpoint) = endpoint {
        let endpoint = if path_style == Some(false) {
            virtual_hosted_endpoint(&endpoint, bucket)?
        } else {
            endpoint
        };
        b = b.with_endpoint(endpoint);
    }
    let store = b.build().map_err(|e| build_error(base, e))?;
    Ok(std::sync::Arc::new(store))
}

#[cfg(feature = "gcs")]
fn build_gcs(
    bucket: &str,
    base: &str,
    config: &StoreConfig,
) -> Result<std::sync::Arc<dyn object_store::ObjectStore>> {
    use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
    use std::str::FromStr;

    let mut b = GoogleCloudStorageBuilder::from_env()
        .with_bucket_name(bucket)
        .with_retry(config.retry_config())
        .with_client_options(config.client_options());
    for (k, v) in super::gcs::hadoop_settings(&config.options)? {
        b = b.with_config(k, v);
    }
    // object_store's own keys last: they win over the Hadoop-style ones.
    for (k, v) in config.with_prefix("google_") {
        let key = GoogleConfigKey::from_str(k)
            .map_err(|e| Error::InvalidArgument(format!("option {k}: {e}")))?;
        b = b.with_config(key, v);
    }
    let store = b.build().map_err(|e| build_error(base, e))?;
    Ok(std::sync::Arc::new(store))
}

#[cfg(feature = "azure")]
fn build_azure(
    scheme: &str,
    authority: &str,
    base: &str,
    config: &StoreConfig,
) -> Result<std::sync::Arc<dyn object_store::ObjectStore>> {
    use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
    use std::str::FromStr;

    let target = super::azure::parse_authority(scheme, authority)?;
    let mut b = MicrosoftAzureBuilder::from_env()
        .with_container_name(&target.container)
        .with_retry(config.retry_config())
        .with_client_options(config.client_options());
    if let Some(endpoint) = &target.endpoint {
        b = b.with_endpoint(endpoint.clone());
    }
    // The account a Hadoop key is looked up for: the location's, else the configured one.
    let account = target.account.clone().or_else(|| {
        config
            .first(&["azure_storage_account_name", "account_name"])
            .map(str::to_string)
            .or_else(|| std::env::var("AZURE_STORAGE_ACCOUNT_NAME").ok())
    });
    for (k, v) in
        super::azure::hadoop_settings(&config.options, account.as_deref(), &target.container)?
    {
        b = b.with_config(k, v);
    }
    // object_store's own keys last: they win over the Hadoop-style ones.
    for (k, v) in config.with_prefix("azure_") {
        let key = AzureConfigKey::from_str(k)
            .map_err(|e| Error::InvalidArgument(format!("option {k}: {e}")))?;
        b = b.with_config(key, v);
    }
    // An explicit plain-HTTP endpoint (a local Azurite) needs HTTP allowed.
    if config
        .first(&["azure_storage_endpoint", "azure_endpoint"])
        .is_some_and(|e| e.to_ascii_lowercase().starts_with("http://"))
    {
        b = b.with_allow_http(true);
    }
    if let Some(a) = &target.account {
        // The location names the account: options cannot redirect it elsewhere.
        b = b.with_account(a);
    }
    let store = b.build().map_err(|e| build_error(base, e))?;
    Ok(std::sync::Arc::new(store))
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
    fn retry_options() {
        let c = StoreConfig::new(&HashMap::new()).unwrap();
        assert_eq!(c.retry, RetrySettings::default());
        let c = StoreConfig::new(&opts(&[
            (RETRY_MAX_RETRIES, "3"),
            (RETRY_TIMEOUT, "30 s"),
            (RETRY_INIT_BACKOFF, "10ms"),
            (RETRY_MAX_BACKOFF, "1 s"),
            (REQUEST_TIMEOUT, "1 min"),
        ]))
        .unwrap();
        assert_eq!(c.retry.max_retries, 3);
        assert_eq!(c.retry.timeout, Duration::from_secs(30));
        assert_eq!(c.retry.init_backoff, Duration::from_millis(10));
        assert_eq!(c.retry.max_backoff, Duration::from_secs(1));
        assert_eq!(c.request_timeout, Some(Duration::from_secs(60)));
        for bad in [
            (RETRY_MAX_RETRIES, "-1"),
            (RETRY_MAX_RETRIES, "x"),
            (RETRY_TIMEOUT, "soon"),
            (RETRY_INIT_BACKOFF, "1 h"),
            (RETRY_MAX_RETRIES, "1001"),
            (RETRY_MAX_RETRIES, "18446744073709551615"),
            (RETRY_TIMEOUT, "8 d"),
            (REQUEST_TIMEOUT, "106751991167 d"),
            (CONNECT_TIMEOUT, "9999999 h"),
        ] {
            assert!(
                matches!(
                    StoreConfig::new(&opts(&[bad])),
                    Err(Error::InvalidArgument(_))
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn secret_keys_are_recognized() {
        for k in [
            "s3.secret-key",
            "fs.s3a.secret.key",
            "fs.s3a.session.token",
            "fs.oss.accessKeySecret",
            "aws_secret_access_key",
            "aws_session_token",
            "fs.azure.account.key.acct.dfs.core.windows.net",
            "azure_storage_account_key",
            "azure_storage_sas_key",
            "fs.azure.account.oauth2.client.secret",
            "fs.gs.auth.service.account.private.key",
            "gcs.service-account-credentials",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in [
            "s3.access-key",
            "s3.endpoint",
            "branch",
            "storage.retry.timeout",
        ] {
            assert!(!is_secret_key(k), "{k}");
        }
    }

    #[test]
    fn debug_hides_values() {
        let c = StoreConfig::new(&opts(&[("s3.secret-key", "TOPSECRET")])).unwrap();
        let s = format!("{c:?}");
        assert!(s.contains("s3.secret-key"));
        assert!(!s.contains("TOPSECRET"));
    }

    #[test]
    fn unsupported_schemes() {
        let c = StoreConfig::new(&HashMap::new()).unwrap();
        assert!(matches!(
            build_object_store("hdfs", "nn:8020", "hdfs://nn:8020", &c),
            Err(Error::Unsupported(_))
        ));
    }

    #[cfg(feature = "s3")]
    #[test]
    fn s3_options_build() {
        let c = StoreConfig::new(&opts(&[
            ("s3.endpoint", "http://127.0.0.1:9000"),
            ("s3.access-key", "a"),
            ("s3.secret-key", "b"),
            ("s3.path.style.access", "true"),
            ("aws_region", "eu-west-1"),
        ]))
        .unwrap();
        build_object_store("s3", "bucket", "s3://bucket", &c).unwrap();
        let c = StoreConfig::new(&opts(&[("aws_no_such_key", "x")])).unwrap();
        assert!(matches!(
            build_object_store("s3", "bucket", "s3://bucket", &c),
            Err(Error::InvalidArgument(_))
        ));
        let c = StoreConfig::new(&opts(&[("s3.path-style-access", "maybe")])).unwrap();
        assert!(build_object_store("s3", "bucket", "s3://bucket", &c).is_err());
        let c = StoreConfig::new(&opts(&[(
            "fs.oss.endpoint",
            "oss-cn-hangzhou.aliyuncs.com",
        )]))
        .unwrap();
        build_object_store("oss", "bucket", "oss://bucket", &c).unwrap();
    }

    #[cfg(feature = "s3")]
    #[test]
    fn endpoints() {
        assert_eq!(normalize_endpoint("minio:9000", true), "https://minio:9000");
        assert_eq!(normalize_endpoint("minio:9000", false), "http://minio:9000");
        assert_eq!(
            normalize_endpoint("http://127.0.0.1:9000/", true),
            "http://127.0.0.1:9000"
        );
        assert_eq!(
            virtual_hosted_endpoint("https://oss-cn-hangzhou.aliyuncs.com", "b").unwrap(),
            "https://b.oss-cn-hangzhou.aliyuncs.com"
        );
        assert_eq!(
            virtual_hosted_endpoint("https://b.s3.example.com", "b").unwrap(),
            "https://b.s3.example.com"
        );
    }

    #[cfg(feature = "azure")]
    #[test]
    fn azure_schemes_build() {
        let key = ("fs.azure.account.key.acct.dfs.core.windows.net", "S0VZS0VZ");
        let c = StoreConfig::new(&opts(&[key])).unwrap();
        for (scheme, authority) in [
            ("abfss", "wh@acct.dfs.core.windows.net"),
            ("abfs", "wh@acct.dfs.core.windows.net"),
            ("wasbs", "wh@acct.blob.core.windows.net"),
            ("wasb", "wh@acct.blob.core.windows.net"),
        ] {
            let base = format!("{scheme}://{authority}");
            build_object_store(scheme, authority, &base, &c)
                .unwrap_or_else(|e| panic!("{base}: {e}"));
        }
        // az:// names no account: it comes from the options.
        let c = StoreConfig::new(&opts(&[
            ("azure_storage_account_name", "acct"),
            ("azure_storage_account_key", "S0VZS0VZ"),
        ]))
        .unwrap();
        build_object_store("az", "wh", "az://wh", &c).unwrap();
        let c = StoreConfig::new(&opts(&[("azure_no_such_key", "x")])).unwrap();
        assert!(matches!(
            build_object_store(
                "abfss",
                "wh@acct.dfs.core.windows.net",
                "abfss://wh@acct.dfs.core.windows.net",
                &c
            ),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            build_object_store("abfss", "wh@acct", "abfss://wh@acct", &c),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[cfg(feature = "gcs")]
    #[test]
    fn gcs_builds_with_hadoop_keys() {
        let dir = std::env::temp_dir().join(format!("paimon-gcs-sa-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sa = dir.join("sa.json");
        std::fs::write(
            &sa,
            r#"{"private_key":"k","private_key_id":"i","client_email":"e","disable_oauth":true}"#,
        )
        .unwrap();
        let c = StoreConfig::new(&opts(&[(
            "fs.gs.auth.service.account.json.keyfile",
            sa.to_str().unwrap(),
        )]))
        .unwrap();
        build_object_store("gs", "b", "gs://b", &c).unwrap();
        let c = StoreConfig::new(&opts(&[("fs.gs.auth.type", "UNAUTHENTICATED")])).unwrap();
        build_object_store("gs", "b", "gs://b", &c).unwrap();
        let c = StoreConfig::new(&opts(&[("google_no_such_key", "x")])).unwrap();
        assert!(build_object_store("gs", "b", "gs://b", &c).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
