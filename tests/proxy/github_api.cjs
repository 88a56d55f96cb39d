// Loaded into GitHub's MCP server (`node --require`) by record_presets.py: its requests to
// api.github.com go to the local API named by TOOLSHAPE_GITHUB_API instead.
const base = process.env.TOOLSHAPE_GITHUB_API;
const original = globalThis.fetch;
globalThis.fetch = (url, options) =>
  original(String(url).replace("https://api.github.com", base), options);
