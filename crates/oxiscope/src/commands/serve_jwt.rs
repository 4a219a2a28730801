//! `oxiscope serve`'s JWT sign-in flags: bearer tokens of an OIDC issuer,
//! accepted besides API keys.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use oxiscope_server::{Jwt, JwtConfig};

/// Accept JWT bearer tokens besides API keys.
#[derive(Debug, Args)]
pub(crate) struct JwtArgs {
    /// Accept JWTs of this issuer (its `iss`); the signing keys come from
    /// its `/.well-known/openid-configuration` → `jwks_uri` unless
    /// `--jwt-jwks` names a file. `https://` (or `http://` on loopback).
    #[arg(long, value_name = "URL", requires = "jwt_audience")]
    jwt_issuer: Option<String>,
    /// Read the issuer's signing keys (a JWKS) from this file instead.
    #[arg(long, value_name = "FILE", requires = "jwt_issuer")]
    jwt_jwks: Option<PathBuf>,
    /// The audience a token's `aud` must name.
    #[arg(long, value_name = "AUD", requires = "jwt_issuer")]
    jwt_audience: Option<String>,
    /// The claim that names the user.
    #[arg(long, value_name = "CLAIM", default_value = "sub")]
    jwt_user_claim: String,
}

impl JwtArgs {
    /// The verifier the flags ask for; `None` without `--jwt-issuer`.
    pub(crate) fn verifier(&self, dev_auth: bool) -> anyhow::Result<Option<Arc<Jwt>>> {
        let (Some(issuer), Some(audience)) = (&self.jwt_issuer, &self.jwt_audience) else {
            return Ok(None);
        };
        anyhow::ensure!(
            !dev_auth,
            "--jwt-issuer signs users in with tokens; --dev-auth trusts a header instead: \
             choose one"
        );
        let mut config =
            JwtConfig::new(issuer, audience).with_user_claim(self.jwt_user_claim.clone());
        if let Some(file) = &self.jwt_jwks {
            config = config.with_jwks_file(file);
        }
        let jwt = Jwt::new(config).context("--jwt-issuer")?;
        Ok(Some(Arc::new(jwt)))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        jwt: JwtArgs,
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
    }

    #[test]
    fn an_issuer_needs_an_audience_and_refuses_the_development_header() {
        assert!(parse(&["--jwt-issuer", "https://id.example"]).is_err());
        assert!(parse(&["--jwt-audience", "api"]).is_err());
        let cli = parse(&[
            "--jwt-issuer",
            "https://id.example",
            "--jwt-audience",
            "api",
        ])
        .unwrap();
        let jwt = cli.jwt.verifier(false).unwrap().unwrap();
        assert_eq!(jwt.config().user_claim, "sub");
        assert!(cli.jwt.verifier(true).is_err());
        assert!(parse(&[]).unwrap().jwt.verifier(false).unwrap().is_none());
    }

    #[test]
    fn keys_are_read_over_https_or_from_loopback_only() {
        let cli = parse(&["--jwt-issuer", "http://id.example", "--jwt-audience", "api"]).unwrap();
        assert!(cli.jwt.verifier(false).is_err());
        let cli = parse(&[
            "--jwt-issuer",
            "http://127.0.0.1:9/",
            "--jwt-audience",
            "api",
        ])
        .unwrap();
        assert!(cli.jwt.verifier(false).is_ok());
    }
}
