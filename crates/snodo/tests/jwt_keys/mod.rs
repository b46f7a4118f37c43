//! Signing keys for the tests, made for them with `openssl genpkey` and
//! used nowhere else: TEST KEYS ONLY, published here on purpose. Each comes
//! with the public JWK its issuer serves (derived from the same key).
#![allow(dead_code, unreachable_pub)]

use serde_json::{Value, json};

/// An RSA key (2048 bits, PKCS #8), for RS256.
pub const RS256_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCwaprwaH5k3aEZ
DgJvQI8aRNss0NGhIHbydKCxvlkesDDATwJWAQnnf8Psm4Nwm8T/AY5ad9AwYDhV
s7Rxee0nUZjLkVOVpkTetKA9XFaITeeHDIGMCNfQ1FZyuDNqR3aYeIxmSihlUjgj
xyUHAKPHxQQVa3fEykXQKX+y+cbl6kHk6AY0RsFtnaKBMpDlMXx4b871hrcprbFb
Y7/Qh5/mSxzNG6QAPtq5Up8mxzFRlo4jqnNcqy8v8LBAB0vbt/2HmaJsomwHceeO
DFzx428wJEcmflwkDQEzKNbTwmmvhokNT9r+sy7XIKkeD5/trhWp4XX4TRDcRn1I
RfTUTvfXAgMBAAECggEAE6FhKUQvYFDrFqsg6TlBUzZ7PwLjeK7wnW0N3olkSE5p
tlR0WZaXAAwPBJqPZy3mH0wQh4+SeneSfTLYbtIW6guh2XEL4HiWbEOkGv/V3yfw
De590dPAFAw0rGJD0l0uXKv5T36L/S5Hce+8domDL/0DxdBmDN9HInEjtQonMDkP
oa290g5S8wRScf+WvGN2BtJBwqyhbC//MaM6PQyXzTkPsPvbyg//RmHDjLTOmctX
VRapX4iiF2yl9+d6WP4FmV7jX9DED0cqo6upjpOtU2WoPgeZAroFuf/MOCpJumuC
mthocJfBoOtEimsIO46Jgwp+A/rQVEPQlPBN2fydYQKBgQD1J/ujD8bbKry4kP/Z
IbdDl/Zz1aWtRr6R1sankSNFozx4YFuAC+iAPn/VNGQPPUaG348gLP+5Nhu9PSGF
kSnb39V0wZFMxaEFiDebei7FwjYB96zAtiGh1ubZwi2eEW/OxalpPeZwlCwR89zF
06bJEC+E0Tm2KO7KfKgKxQdD9wKBgQC4OEAKnbFqDKHrhjdcZ56Tb8vHUba79fIu
bsgILXWhF4PKCaqKo1dOlWVsSfXpfLuwiu4ujDkD/Uf9nG3iN8vgjsW24oJ2KCoE
Ku0OwmrknPQysZs/DtHsX+hk38j/5gJ4sSyNInio9uew49Q46nzKsXXyQmkWGn4F
OsMLc5MzIQKBgFpT0AiloHxSQ9SxQENtg8u46wqE9pVgkojDnNBSzq8y1O35et00
Bgdyf8E7m35t8lVxe5e8XMCOKixQoNBIyyaDU2/AflvOGWUjanGz1BXzV9jju9gJ
g1zRBJ/JRuuNuydxdtkbAJQMVCyNMJQHRtWgTBHg0SXH8SvUQEovjFzDAoGBAKoO
MwAZxfbRpn9WrLA+byJHJ2PdyMQGLAQ0+66g2F9W56+P8MB+PFAslS27sKhTHqe/
+FM72j4Wh2hUCRO00h1/boB+5FPSi8bBIYhobGiRgtNxJJC3S43akxrbgh7H4ywq
0aePVLcVBZhDGFtaCszJuMlkCMIAvqhxMC/YBuBBAoGARcAyWhl+C6YZwFMJqjo8
wUK5hjThmTOJDIEKql1anySt4qXY99W9+2cpdCqrVDT7NgRjn7wxp8JwFuxbkixx
upYRAxxnuTSPrIcC8Pi0EMepYaKMg84D4L00l695NXThwqlkwuIx6D0eaO0va5B/
BCcduJFtt1df/btHVejDu+M=
-----END PRIVATE KEY-----
";

/// The RSA key's public half (SPKI PEM): what an attacker knows.
pub const RS256_PUBLIC_PEM: &str = "-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAsGqa8Gh+ZN2hGQ4Cb0CP
GkTbLNDRoSB28nSgsb5ZHrAwwE8CVgEJ53/D7JuDcJvE/wGOWnfQMGA4VbO0cXnt
J1GYy5FTlaZE3rSgPVxWiE3nhwyBjAjX0NRWcrgzakd2mHiMZkooZVI4I8clBwCj
x8UEFWt3xMpF0Cl/svnG5epB5OgGNEbBbZ2igTKQ5TF8eG/O9Ya3Ka2xW2O/0Ief
5ksczRukAD7auVKfJscxUZaOI6pzXKsvL/CwQAdL27f9h5mibKJsB3Hnjgxc8eNv
MCRHJn5cJA0BMyjW08Jpr4aJDU/a/rMu1yCpHg+f7a4VqeF1+E0Q3EZ9SEX01E73
1wIDAQAB
-----END PUBLIC KEY-----
";

/// A P-256 key (PKCS #8), for ES256.
pub const ES256_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgbYB/z0DMzJeOZiBs
DlB0ZqdAquV1nP0+DJQ28nFKMdGhRANCAAQJuYAteFcP1YMGdSp3mv+FopbTyxP/
q0fksa+BtrGKlFUW1gapyGEvh1G7OX8cdcqcj0pC8hzSSQYO0ZydssN/
-----END PRIVATE KEY-----
";

/// An Ed25519 key (PKCS #8), for EdDSA.
pub const ED25519_KEY: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIHm8q+pzR1WQqyihymru8072Uv7lV/4nWcGISKbUgcVy
-----END PRIVATE KEY-----
";

/// Another Ed25519 key, published only when a test says so.
pub const ED25519_OTHER_KEY: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIPLqluvRWK9pZ/t4wQzvOt/A8aa+uSHbBBBc6JkFdxpO
-----END PRIVATE KEY-----
";

/// The RSA key's public JWK, as `kid`.
pub fn rs256_jwk(kid: &str) -> Value {
    json!({"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "e": "AQAB",
        "n": "sGqa8Gh-ZN2hGQ4Cb0CPGkTbLNDRoSB28nSgsb5ZHrAwwE8CVgEJ53_D7JuDcJvE_wGOWnfQMGA4VbO0cXntJ1GYy5FTlaZE3rSgPVxWiE3nhwyBjAjX0NRWcrgzakd2mHiMZkooZVI4I8clBwCjx8UEFWt3xMpF0Cl_svnG5epB5OgGNEbBbZ2igTKQ5TF8eG_O9Ya3Ka2xW2O_0Ief5ksczRukAD7auVKfJscxUZaOI6pzXKsvL_CwQAdL27f9h5mibKJsB3Hnjgxc8eNvMCRHJn5cJA0BMyjW08Jpr4aJDU_a_rMu1yCpHg-f7a4VqeF1-E0Q3EZ9SEX01E731w"})
}

/// The P-256 key's public JWK, as `kid`.
pub fn es256_jwk(kid: &str) -> Value {
    json!({"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
        "x": "CbmALXhXD9WDBnUqd5r_haKW08sT_6tH5LGvgbaxipQ",
        "y": "VRbWBqnIYS-HUbs5fxx1ypyPSkLyHNJJBg7RnJ2yw38"})
}

/// The Ed25519 key's public JWK, as `kid`.
pub fn ed25519_jwk(kid: &str) -> Value {
    json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "use": "sig",
        "x": "9344-rG3ABeM937CWeP_AEb97VGFPwRNNnaSWuLHLHM"})
}

/// The other Ed25519 key's public JWK, as `kid`.
pub fn ed25519_other_jwk(kid: &str) -> Value {
    json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "use": "sig",
        "x": "lW4Pu-G5fQVO75f75M98muC7PDPJyg5bIlrncLA90zE"})
}
