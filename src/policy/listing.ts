// A list's question, "could some arguments be allowed?", asked of the same preparsed machinery a
// call uses: each policy is rewritten once, at load, with every test of `context.arguments`
// replaced by the value that favours allowing (true in a permit's `when`, false in a forbid's,
// and flipped under a `!` or in an `unless`), so a list decision costs what a call's does.
// Cedar's partial evaluation answers the same question exactly but costs milliseconds a tool.
// The rewrite over-approximates only where one policy's argument tests contradict another's:
// such a tool is listed and its calls are refused; a call is always decided on its arguments.
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';

type Expr = Record<string, unknown>;

const ARGUMENTS = JSON.stringify({ left: { Var: 'context' }, attr: 'arguments' });

function mentionsArguments(expr: unknown): boolean {
  return JSON.stringify(expr).includes(ARGUMENTS);
}

function relaxed(expr: Expr, favour: boolean): Expr {
  if (!mentionsArguments(expr)) return expr;
  const [op, body] = Object.entries(expr)[0] as [string, Record<string, Expr>];
  if (op === '&&' || op === '||')
    return { [op]: { left: relaxed(body.left!, favour), right: relaxed(body.right!, favour) } };
  if (op === '!') return { '!': { arg: relaxed(body.arg!, !favour) } };
  if (op === 'if-then-else' && !mentionsArguments(body.if))
    return { [op]: { if: body.if, then: relaxed(body.then!, favour), else: relaxed(body.else!, favour) } };
  return { Value: favour };
}

/** The policy as a list decides it (text), or the policy itself when it never reads the arguments. */
export function listingPolicy(policy: string): string {
  const parsed = cedar.policyToJson(policy);
  if (parsed.type !== 'success' || !mentionsArguments(parsed.json.conditions)) return policy;
  const permit = parsed.json.effect === 'permit';
  const conditions = parsed.json.conditions.map((c) => ({
    ...c,
    body: relaxed(c.body as Expr, permit === (c.kind === 'when')) as typeof c.body,
  }));
  const text = cedar.policyToText({ ...parsed.json, conditions });
  return text.type === 'success' ? text.text : policy;
}
