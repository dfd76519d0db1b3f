//! Static keys from the AWS shared credentials file (`~/.aws/credentials`), the one link of the
//! usual AWS credential chain that object_store's `AmazonS3Builder::from_env` does not read.
//!
//! Used only when neither the options nor `AWS_ACCESS_KEY_ID` give a key: the profile is
//! `AWS_PROFILE` (else `default`), the file `AWS_SHARED_CREDENTIALS_FILE` (else
//! `$HOME/.aws/credentials`). A profile without static keys (SSO, `role_arn`, `credential_process`)
//! is left to the rest of object_store's chain (web identity, ECS, instance metadata).

use std::path::PathBuf;

use crate::error::{Error, Result};

/// Static keys of one profile.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ProfileKeys {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for ProfileKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print secrets.
        f.debug_struct("ProfileKeys")
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// The keys of `profile` in the INI text `ini`, if it has both an access key id and a secret.
fn parse(ini: &str, profile: &str) -> Option<ProfileKeys> {
    let mut in_profile = false;
    let (mut id, mut secret, mut token) = (None, None, None);
    for line in ini.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_profile = name.trim() == profile;
            continue;
        }
        if !in_profile {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            let v = v.trim().to_string();
            match k.trim().to_ascii_lowercase().as_str() {
                "aws_access_key_id" => id = Some(v),
                "aws_secret_access_key" => secret = Some(v),
                "aws_session_token" => token = Some(v),
                _ => {}
            }
        }
    }
    Some(ProfileKeys {
        access_key_id: id.filter(|s| !s.is_empty())?,
        secret_access_key: secret.filter(|s| !s.is_empty())?,
        session_token: token.filter(|s| !s.is_empty()),
    })
}

/// The keys of the selected profile, looked up with `env` (the process environment in
/// production). `Ok(None)` when `AWS_ACCESS_KEY_ID` is set, the file is absent or the profile
/// has no static keys (or is not in the file); an error when the file exists but cannot be read,
/// or a profile was asked for by name (`AWS_PROFILE`) and there is no file.
pub(crate) fn profile_keys(env: impl Fn(&str) -> Option<String>) -> Result<Option<ProfileKeys>> {
    if env("AWS_ACCESS_KEY_ID").is_some_and(|v| !v.is_empty()) {
        return Ok(None);
    }
    let path = match env("AWS_SHARED_CREDENTIALS_FILE").filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => match env("HOME").filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h).join(".aws").join("credentials"),
            None => return Ok(None),
        },
    };
    let named = env("AWS_PROFILE").filter(|v| !v.is_empty());
    let profile = named.clone().unwrap_or_else(|| "default".to_string());
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && named.is_none() => return Ok(None),
        Err(e) => {
            return Err(Error::InvalidArgument(format!(
                "AWS credentials file {} (profile '{profile}'): {e}",
                path.display()
            )))
        }
    };
    let keys = parse(&text, &profile);
    if keys.is_none() {
        tracing::debug!(profile = %profile, file = %path.display(), "no static keys in the AWS profile; using the rest of the credential chain");
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const INI: &str = "\
# comment
[default]
aws_access_key_id = AKIDEFAULT
aws_secret_access_key = secret-default

[prod]
aws_access_key_id=AKIPROD
aws_secret_access_key=secret-prod
aws_session_token = tok
region = eu-west-1

[sso]
sso_start_url = https://example.awsapps.com/start
";

    fn env_of(kv: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = kv
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn parses_profiles() {
        let d = parse(INI, "default").unwrap();
        assert_eq!(d.access_key_id, "AKIDEFAULT");
        assert_eq!(d.secret_access_key, "secret-default");
        assert_eq!(d.session_token, None);
        let p = parse(INI, "prod").unwrap();
        assert_eq!(p.access_key_id, "AKIPROD");
        assert_eq!(p.session_token.as_deref(), Some("tok"));
        assert!(parse(INI, "sso").is_none());
        assert!(parse(INI, "nope").is_none());
        assert!(!format!("{p:?}").contains("secret-prod"));
    }

    #[test]
    fn selects_file_and_profile_from_the_environment() {
        let dir = std::env::temp_dir().join(format!("paimon-aws-profile-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".aws")).unwrap();
        let file = dir.join(".aws").join("credentials");
        std::fs::write(&file, INI).unwrap();
        let home = dir.to_str().unwrap();
        let f = file.to_str().unwrap();

        let k = profile_keys(env_of(&[("HOME", home)])).unwrap().unwrap();
        assert_eq!(k.access_key_id, "AKIDEFAULT");
        let k = profile_keys(env_of(&[
            ("AWS_SHARED_CREDENTIALS_FILE", f),
            ("AWS_PROFILE", "prod"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(k.access_key_id, "AKIPROD");
        // Keys in the environment take precedence: the file is not consulted.
        assert!(
            profile_keys(env_of(&[("HOME", home), ("AWS_ACCESS_KEY_ID", "x")]))
                .unwrap()
                .is_none()
        );
        // A profile without static keys falls through to the rest of the chain.
        assert!(
            profile_keys(env_of(&[("HOME", home), ("AWS_PROFILE", "sso")]))
                .unwrap()
                .is_none()
        );
        // No file: nothing, unless a profile was asked for by name.
        let empty = dir.join("empty");
        let e = empty.to_str().unwrap();
        assert!(profile_keys(env_of(&[("HOME", e)])).unwrap().is_none());
        assert!(profile_keys(env_of(&[("HOME", e), ("AWS_PROFILE", "prod")])).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
