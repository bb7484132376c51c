/**
 * The environment's part in a config: `${NAME}` references expanded from it, and the MCPGW_*
 * variables that override keys of the file.
 */

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `${NAME}` in a string comes from the gateway's environment; a missing one is a problem named at `where`. */
export function substituteEnv(value: string, where: string, env: NodeJS.ProcessEnv, problems: string[]): string {
  return value.replace(ENV_REF, (_m, name: string) => {
    const v = env[name];
    if (v === undefined) {
      problems.push(`${where}: environment variable ${name} is not set`);
      return '';
    }
    return v;
  });
}

/** MCPGW_HOST, MCPGW_PORT, MCPGW_LOG_LEVEL and MCPGW_REDIS_URL win over the file (before validation). */
export function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, problems: string[]): void {
  // A `listen` that is not a mapping is left as it is, for the schema to name.
  const listen = (typeof raw.listen === 'object' && raw.listen !== null ? raw.listen : {}) as Record<string, unknown>;
  if (env.MCPGW_HOST) listen.host = env.MCPGW_HOST;
  if (env.MCPGW_PORT) {
    const port = Number(env.MCPGW_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      problems.push(`MCPGW_PORT: "${env.MCPGW_PORT}" is not a port number`);
    else listen.port = port;
  }
  if ((env.MCPGW_HOST || env.MCPGW_PORT) && raw.listen === undefined) raw.listen = listen;
  if (env.MCPGW_LOG_LEVEL) raw.logLevel = env.MCPGW_LOG_LEVEL;
  if (env.MCPGW_REDIS_URL) {
    const sessions = raw.sessions ?? {};
    if (typeof sessions === 'object' && sessions !== null && !Array.isArray(sessions)) {
      raw.sessions = { ...sessions, redisUrl: env.MCPGW_REDIS_URL };
    }
  }
}
