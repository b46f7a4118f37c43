// A real OpenID Connect provider (oidc-provider, pinned in package.json) for
// snodo's OAuth tests, on 127.0.0.1 only.
//
//   node interop/oauth/provider.mjs [--opaque RESOURCE]... [--idp | --trust-idp ISSUER]
//
// Listens on a free port and prints one JSON line: {"issuer": "http://127.0.0.1:PORT"}.
// Exits when its standard input closes (the test that started it ended).
//
// What it offers:
// - access tokens for any http://127.0.0.1 or http://localhost resource
//   (RFC 8707 resource indicators), with scopes demo:read and files:write:
//   signed JWTs (ES256, RFC 9068), or opaque tokens for the resources named
//   with --opaque (checked with RFC 7662 introspection);
// - the client_credentials grant for client "svc" (secret "svc-secret",
//   both scopes) and "reader" (secret "reader-secret", demo:read only);
// - the authorization code grant with PKCE, dynamic client registration,
//   and the provider's own login and consent pages (any login, any password);
// - introspection for client "rs" (secret "rs-secret");
// - enterprise-managed authorization (the MCP authorization extension), two
//   grants registered on the provider with registerGrantType: with --idp it
//   is the enterprise identity provider, whose token exchange (RFC 8693)
//   trades an ID token it issued to client "app" (secret "idp-secret") for
//   an identity assertion grant (ID-JAG, typ oauth-id-jag+jwt) for the
//   audience and resource asked; with --trust-idp ISSUER it is the MCP
//   server's authorization server, whose jwt-bearer grant (RFC 7523) takes
//   an ID-JAG of that identity provider (checked against its JWKS: issuer,
//   audience, client, resource, expiry) from client "app" (secret
//   "app-secret", client_secret_basic) and issues an access token for the
//   user it names.
//
// Test hooks, under /__test/ (nothing of the provider's own is changed):
// - POST /__test/sign {claims, header?, rogue?}: a JWT signed with the
//   provider's access-token key (or, with rogue, a key it does not publish);
// - POST /__test/jwks/down and /__test/jwks/up: the JWKS answers 503 while down.
import crypto from 'node:crypto';
import http from 'node:http';
import * as jose from 'jose';
import Provider, { errors } from 'oidc-provider';

const opaque = new Set();
let isIdp = false;
let trustedIdp = null;
for (let i = 2; i < process.argv.length; i += 1) {
  if (process.argv[i] === '--opaque') opaque.add(process.argv[(i += 1)]);
  else if (process.argv[i] === '--idp') isIdp = true;
  else if (process.argv[i] === '--trust-idp') trustedIdp = process.argv[(i += 1)];
}
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

const SCOPES = 'demo:read files:write';
const es = await jose.generateKeyPair('ES256', { extractable: true });
const rs = await jose.generateKeyPair('RS256', { extractable: true });
const rogue = await jose.generateKeyPair('ES256', { extractable: true });
const esJwk = { ...(await jose.exportJWK(es.privateKey)), kid: 'es-1', alg: 'ES256', use: 'sig' };
const rsJwk = { ...(await jose.exportJWK(rs.privateKey)), kid: 'rs-1', alg: 'RS256', use: 'sig' };

let jwksDown = false;
let handler = (_req, res) => {
  res.statusCode = 503;
  res.end();
};

const server = http.createServer((req, res) => handler(req, res));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const isLocal = (url) => {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' && ['127.0.0.1', 'localhost'].includes(u.hostname);
  } catch {
    return false;
  }
};

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'svc',
      client_secret: 'svc-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: SCOPES,
    },
    {
      client_id: 'reader',
      client_secret: 'reader-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: 'demo:read',
    },
    {
      client_id: 'rs',
      client_secret: 'rs-secret',
      grant_types: [],
      redirect_uris: [],
      response_types: [],
    },
    ...(isIdp ? [{
      client_id: 'app',
      client_secret: 'idp-secret',
      grant_types: [TOKEN_EXCHANGE],
      redirect_uris: [],
      response_types: [],
    }] : []),
    ...(trustedIdp ? [{
      client_id: 'app',
      client_secret: 'app-secret',
      grant_types: [JWT_BEARER],
      redirect_uris: [],
      response_types: [],
      scope: SCOPES,
    }] : []),
  ],
  jwks: { keys: [rsJwk, esJwk] },
  cookies: { keys: ['snodo-test-cookie-key'] },
  scopes: ['openid', 'offline_access', 'demo:read', 'files:write'],
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resource) => {
        if (!isLocal(resource)) throw new Provider.errors.InvalidTarget();
        return {
          scope: SCOPES,
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: opaque.has(resource) ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
  ttl: { ClientCredentials: 600, AccessToken: 600 },
});

const { InvalidGrant, InvalidRequest } = errors;

// A JWT of this provider (its access-token key) for `sub` and `aud`, of
// type `typ`, living `ttl` seconds.
const issue = (claims, { typ, sub, aud, ttl }) => new jose.SignJWT(claims)
  .setProtectedHeader({ alg: 'ES256', kid: 'es-1', typ })
  .setIssuer(issuer)
  .setSubject(sub)
  .setAudience(aud)
  .setJti(crypto.randomUUID())
  .setIssuedAt()
  .setExpirationTime(`${ttl}s`)
  .sign(es.privateKey);

if (isIdp) {
  // The identity provider's token exchange: an ID token it issued to the
  // client, for an ID-JAG for the audience (an authorization server) and
  // resource asked.
  provider.registerGrantType(TOKEN_EXCHANGE, async (ctx) => {
    const { params, client } = ctx.oidc;
    if (params.requested_token_type !== ID_JAG || params.subject_token_type !== ID_TOKEN) {
      throw new InvalidRequest('only an ID token for an ID-JAG is exchanged here');
    }
    if (!isLocal(params.audience) || !isLocal(params.resource)) {
      throw new InvalidRequest('audience and resource are loopback URLs here');
    }
    let idToken;
    try {
      ({ payload: idToken } = await jose.jwtVerify(params.subject_token, es.publicKey, {
        issuer, audience: client.clientId,
      }));
    } catch (e) {
      throw new InvalidGrant(`the subject token is not an ID token of this provider for the client: ${e.message}`);
    }
    const jag = await issue({
      client_id: client.clientId,
      resource: params.resource,
      ...(params.scope ? { scope: params.scope } : {}),
    }, { typ: 'oauth-id-jag+jwt', sub: idToken.sub, aud: params.audience, ttl: 300 });
    ctx.body = { access_token: jag, issued_token_type: ID_JAG, token_type: 'N_A', expires_in: 300 };
  }, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope']);
}

if (trustedIdp) {
  // The authorization server's jwt-bearer grant: an ID-JAG of the trusted
  // identity provider, for this issuer, the authenticated client and the
  // resource asked, becomes an access token for the user it names.
  const idpKeys = jose.createRemoteJWKSet(new URL(`${trustedIdp}/jwks`));
  provider.registerGrantType(JWT_BEARER, async (ctx) => {
    const { params, client } = ctx.oidc;
    let jag;
    try {
      if (jose.decodeProtectedHeader(params.assertion).typ !== 'oauth-id-jag+jwt') {
        throw new Error('typ is not oauth-id-jag+jwt');
      }
      ({ payload: jag } = await jose.jwtVerify(params.assertion, idpKeys, {
        issuer: trustedIdp, audience: issuer,
      }));
    } catch (e) {
      throw new InvalidGrant(`the assertion is not an ID-JAG for this server: ${e.message}`);
    }
    if (jag.client_id !== client.clientId) {
      throw new InvalidGrant('the ID-JAG was issued to another client');
    }
    if (!params.resource || jag.resource !== params.resource) {
      throw new InvalidGrant('the ID-JAG is for another resource');
    }
    const granted = new Set((jag.scope || '').split(' '));
    const scope = (params.scope || jag.scope || '').split(' ')
      .filter((s) => s && granted.has(s) && SCOPES.split(' ').includes(s)).join(' ');
    const token = await issue(
      { client_id: client.clientId, ...(scope ? { scope } : {}) },
      { typ: 'at+jwt', sub: jag.sub, aud: params.resource, ttl: 600 },
    );
    ctx.body = { access_token: token, token_type: 'Bearer', expires_in: 600, ...(scope ? { scope } : {}) };
  }, ['assertion', 'scope', 'resource']);
}

const readJson = (req) => new Promise((resolve, reject) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    try {
      resolve(body ? JSON.parse(body) : {});
    } catch (e) {
      reject(e);
    }
  });
});

const callback = provider.callback();
handler = async (req, res) => {
  const path = new URL(req.url, issuer).pathname;
  if (path === '/__test/jwks/down' || path === '/__test/jwks/up') {
    jwksDown = path.endsWith('down');
    res.end('ok');
    return;
  }
  if (path === '/__test/sign') {
    const { claims, header, rogue: useRogue } = await readJson(req);
    const key = useRogue ? rogue.privateKey : es.privateKey;
    const protectedHeader = { alg: 'ES256', kid: useRogue ? 'rogue-1' : 'es-1', typ: 'at+jwt', ...header };
    const token = await new jose.SignJWT(claims).setProtectedHeader(protectedHeader).sign(key);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ token, jwk: await jose.exportJWK(es.publicKey) }));
    return;
  }
  if (path === '/jwks' && jwksDown) {
    res.statusCode = 503;
    res.end();
    return;
  }
  callback(req, res);
};

process.stdout.write(`${JSON.stringify({ issuer })}\n`);
// Whatever the provider logs later goes to stderr: stdout carries the one
// line above, and whoever reads it may stop reading.
for (const level of ['log', 'info', 'warn', 'debug']) {
  console[level] = (...args) => process.stderr.write(`${args.join(' ')}\n`);
}
process.stdout.on('error', () => {});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
