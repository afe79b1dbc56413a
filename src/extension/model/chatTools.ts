// The chat tools' definitions are shared with `baton mcp --for-person` (src/tools/chatTools.ts); what is the editor's
// own — whether and how it offers Baton's MCP server to chat — is here.
export * from '../../tools/chatTools';
