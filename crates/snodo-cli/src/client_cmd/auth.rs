//! OAuth for the client commands: stored tokens (a file per issuer under
//! the user's config folder, mode 0600), `--token`/`SNODO_TOKEN`, client
//! credentials, and `snodo login` / `snodo logout`.

use std::sync::Arc;

use snodo::client::Target;
use snodo::client::oauth::{
    Assertion, AuthorizationSession, Authorizer, ClientCredentials, DpopKey, EnterpriseIdp,
    FileStore, LoopbackBrowser, OAuth, OAuthError, TokenStore,
};
use snodo::handler::BoxFuture;
use snodo::model::auth::metadata::resource_covers;

use super::args::{AuthOptions, LoginArgs, LogoutArgs};
use super::failure::{EXIT_AUTH, EXIT_USAGE, Failure};

/// An authorizer for commands that must not start a person's login: it
/// says how to log in instead.
#[derive(Debug)]
struct LoginFirst {
    target: String,
}

impl Authorizer for LoginFirst {
    fn start(&self) -> BoxFuture<'_, Result<Box<dyn AuthorizationSession>, OAuthError>> {
        let why = format!(
            "not logged in (or the login expired): run `snodo login {}`",
            self.target
        );
        Box::pin(async move { Err(OAuthError::Authorization(why)) })
    }
}

fn store() -> Result<FileStore, Failure> {
    FileStore::default_dir()
        .map(FileStore::new)
        .ok_or_else(|| Failure {
            code: EXIT_AUTH,
            message:
                "no config folder for OAuth tokens: set HOME, XDG_CONFIG_HOME or SNODO_CONFIG_DIR"
                    .into(),
        })
}

/// What a command sends: a static `Authorization` header (`--token`), or
/// OAuth (stored tokens, refreshed; client credentials). `None` for stdio.
pub(crate) enum Plan {
    Header(String),
    OAuth(OAuth),
    Nothing,
}

/// The plan for `target` under `auth`; a person's login is started only
/// when `interactive`, otherwise the command says to run `snodo login`.
pub(crate) fn plan(target: &str, auth: &AuthOptions, interactive: bool) -> Result<Plan, Failure> {
    if !Target::is_url(target) {
        return Ok(Plan::Nothing);
    }
    if let Some(token) = &auth.token {
        return Ok(Plan::Header(format!("Bearer {}", token.trim())));
    }
    let mut oauth = OAuth::builder().client_name("snodo");
    if auth.dpop {
        oauth = oauth.dpop(dpop_key()?);
    }
    if let Some(id) = &auth.client_id {
        // A machine's tokens live as long as the command: the stored login
        // of the person stays as it was.
        let credentials = match (&auth.workload_token, &auth.idp_token_endpoint) {
            (Some(file), _) => ClientCredentials::WorkloadJwt {
                client_id: id.clone(),
                assertion: Assertion::file(file),
            },
            (None, Some(endpoint)) => ClientCredentials::Enterprise {
                client_id: id.clone(),
                client_secret: auth.client_secret.clone().unwrap_or_default(),
                idp: {
                    let idp = EnterpriseIdp::new(
                        endpoint,
                        auth.idp_client_id.as_deref().unwrap_or_default(),
                        Assertion::file(auth.id_token.clone().unwrap_or_default()),
                    );
                    match &auth.idp_client_secret {
                        Some(secret) => idp.with_secret(secret),
                        None => idp,
                    }
                },
            },
            (None, None) => match &auth.client_secret {
                Some(secret) => ClientCredentials::secret(id, secret),
                None => {
                    return Err(Failure {
                        code: EXIT_USAGE,
                        message: "--client-id needs --client-secret, --workload-token or --idp-token-endpoint".into(),
                    });
                }
            },
        };
        return Ok(Plan::OAuth(oauth.client_credentials(credentials).build()));
    }
    let store: Arc<dyn TokenStore> = Arc::new(store()?);
    oauth = oauth.store(store);
    if interactive {
        oauth = oauth.authorizer(LoopbackBrowser::new());
    } else {
        oauth = oauth.authorizer(LoginFirst {
            target: target.to_string(),
        });
    }
    Ok(Plan::OAuth(oauth.build()))
}

/// The OAuth for `snodo login`: the stored registration is reused, the
/// stored tokens are not (a new authorization always happens).
pub(crate) fn login_oauth(args: &LoginArgs) -> Result<OAuth, Failure> {
    if !Target::is_url(&args.target) {
        return Err(Failure {
            code: EXIT_USAGE,
            message: format!("snodo login needs an http(s):// URL, not {:?}", args.target),
        });
    }
    let store: Arc<dyn TokenStore> = Arc::new(store()?.without_tokens());
    let browser = LoopbackBrowser::new()
        .port(args.port)
        .open_browser(!args.no_browser);
    let mut oauth = OAuth::builder()
        .client_name("snodo")
        .store(store)
        .authorizer(browser);
    if args.opts.auth.dpop {
        oauth = oauth.dpop(dpop_key()?);
    }
    Ok(oauth.build())
}

/// The DPoP key kept beside the stored tokens (`--dpop`).
fn dpop_key() -> Result<DpopKey, Failure> {
    store()?.dpop_key().map_err(|e| Failure {
        code: EXIT_AUTH,
        message: format!("cannot use the DPoP key: {e}"),
    })
}

/// `snodo logout TARGET`: forgets the tokens and registrations kept for the
/// server at TARGET; prints how many issuers were forgotten.
pub(crate) fn logout(args: &LogoutArgs) -> Result<u8, Failure> {
    let store = store()?;
    let mut forgotten = 0;
    for state in store.all() {
        if state
            .resource
            .as_deref()
            .is_some_and(|r| resource_covers(r, &args.target) || r == args.target)
        {
            store.remove(&state.issuer);
            forgotten += 1;
        }
    }
    if forgotten == 0 {
        outln!("Not logged in to {}", args.target);
    } else {
        outln!("Logged out of {}", args.target);
    }
    Ok(0)
}
