// The folders of js/ and which way their imports point (js/view/README.md, js/host/README.md,
// js/page/README.md): protocol.js is the shared vocabulary and imports nothing of ours; page/ and
// host/ import protocol.js and their own folder; view/ and app/ may also import host/; nothing imports
// view/ or app/.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const jsDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** What each folder ("" is js/ itself, i.e. protocol.js) may import besides itself. */
const MAY_IMPORT = /** @type {Record<string, string[]>} */ ({
  "": [],
  page: [""],
  host: [""],
  view: ["", "host"],
  app: ["", "host"],
  export: ["", "host", "view"],
});

/**
 * Every relative specifier a module names: static imports, re-exports, dynamic imports and JSDoc
 * type imports alike (a type import is a dependency of the type check).
 * @param {string} source
 * @returns {string[]}
 */
function specifiers(source) {
  const found = [];
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm)) {
    found.push(match[1]);
  }
  return found;
}

/** @returns {{file: string, folder: string}[]} the modules of js/, top level and folders */
function modules() {
  const top = readdirSync(jsDir).filter((name) => name.endsWith(".js"));
  const list = top.map((name) => ({ file: join(jsDir, name), folder: "" }));
  for (const folder of Object.keys(MAY_IMPORT).filter(Boolean)) {
    for (const name of readdirSync(join(jsDir, folder)).filter((n) => n.endsWith(".js"))) {
      list.push({ file: join(jsDir, folder, name), folder });
    }
  }
  return list;
}

/** @param {string} path an absolute path under js/ */
function folderOf(path) {
  const parts = relative(jsDir, path).split(/[\\/]/);
  return parts.length > 1 ? parts[0] : "";
}

describe("the layout of js/", () => {
  test("the top level holds protocol.js alone, beside view/, host/, page/ and app/", () => {
    assert.deepEqual(
      modules().filter((m) => m.folder === "").map((m) => relative(jsDir, m.file)),
      ["protocol.js"],
    );
  });

  test("every import points where the folder's README allows", () => {
    const wrong = [];
    for (const { file, folder } of modules()) {
      for (const spec of specifiers(readFileSync(file, "utf8"))) {
        const target = folderOf(resolve(dirname(file), spec));
        if (target !== folder && !MAY_IMPORT[folder].includes(target)) {
          wrong.push(`${relative(jsDir, file)} imports ${spec}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });

  test("the scan sees the imports it checks", () => {
    const widget = specifiers(readFileSync(join(jsDir, "view", "widget.js"), "utf8"));
    assert.ok(widget.includes("../protocol.js") && widget.includes("./panel.js") && widget.includes("../host/relay.js"));
  });
});
