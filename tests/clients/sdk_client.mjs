// An ACP client written with the official TypeScript SDK (@agentclientprotocol/sdk), for
// tests/clients/test_typescript_sdk.py: it starts the bridge, runs the prompts it is given in
// one session, approves every permission with the first "allow" option, and prints one JSON
// object: the answers and every session/update, as the SDK handed them to its handlers
// (the SDK parses each message with the ACP schema before a handler sees it).
//
// node sdk_client.mjs '{"command": [...], "cwd": "...", "prompts": ["...", ...]}'
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const { command, cwd, prompts } = JSON.parse(process.argv[2]);
const bridge = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(bridge.stdin), Readable.toWeb(bridge.stdout));

const updates = [];
const permissions = [];
const app = acp
  .client({ name: "zcode-acp-tests" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    permissions.push(params);
    const allow = params.options.find((option) => option.kind.startsWith("allow"));
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

const report = await app.connectWith(stream, async (ctx) => {
  const initialize = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: "zcode-acp-tests", version: "1" },
  });
  const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const answers = [];
  for (const text of prompts) {
    answers.push(await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text }],
    }));
  }
  return { initialize, session, answers };
});
bridge.stdin.end();
await new Promise((resolve) => bridge.once("exit", resolve));
process.stdout.write(JSON.stringify({ ...report, updates, permissions, exitCode: bridge.exitCode }) + "\n");
