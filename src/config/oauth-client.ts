/**
 * The gateway as an OAuth client (towards an upstream's authorization server, or the one that
 * introspects tokens): the credential keys both blocks share, and their one check.
 */
import { substituteEnv } from './env.js';

export const oauthClientCredentials = {
  clientId: { type: 'string', minLength: 1, description: "The gateway's client id at the authorization server." },
  clientSecret: {
    type: 'string',
    minLength: 1,
    description: 'Its client secret; ${VAR} is expanded from the environment: keep the secret out of the file.',
  },
} as const;

/**
 * `${VAR}` in the endpoint (`urlKey`: tokenUrl, or the introspection url) and the secret; the
 * endpoint must then be an http(s) URL (its pattern lets a `${` through to be expanded).
 */
export function oauthClientChecks<K extends string>(
  client: Record<K | 'clientSecret', string>,
  urlKey: K,
  at: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
): void {
  client[urlKey] = substituteEnv(client[urlKey], `${at}.${urlKey}`, env, problems);
  client.clientSecret = substituteEnv(client.clientSecret, `${at}.clientSecret`, env, problems);
  if (!/^https?:\/\//.test(client[urlKey])) problems.push(`${at}.${urlKey}: must be an http(s) URL`);
}
