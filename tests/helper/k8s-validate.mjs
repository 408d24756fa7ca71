// SPDX-License-Identifier: LGPL-2.1-or-later
// Validate Kubernetes objects (JSON, one per argument file: a List's
// items, or one object) against the API's schemas, offline, with the
// npm package kubernetes-models (its directory: the first argument).
// Prints "ok KIND NAME" or "invalid KIND NAME: why" for each; exits 1 if
// any is invalid or of a kind it does not know.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [root, ...files] = process.argv.slice(2);
// apiVersion -> the package's directory for it
const groupDir = (apiVersion) => (apiVersion.includes("/") ? apiVersion : `v1`);
let bad = 0;

for (const file of files) {
	const doc = JSON.parse(readFileSync(file, "utf8"));
	for (const obj of doc.kind === "List" ? doc.items : [doc]) {
		const what = `${obj.kind} ${obj.metadata?.name}`;
		let models;
		try {
			models = await import(pathToFileURL(`${root}/${groupDir(obj.apiVersion)}/index.js`));
		} catch (e) {
			console.log(`invalid ${what}: no schema for ${obj.apiVersion}`);
			bad++;
			continue;
		}
		const Model = models[obj.kind];
		if (!Model) {
			console.log(`invalid ${what}: no schema for ${obj.apiVersion} ${obj.kind}`);
			bad++;
			continue;
		}
		try {
			new Model(obj).validate();
			console.log(`ok ${what}`);
		} catch (e) {
			console.log(`invalid ${what}: ${e.message}`);
			bad++;
		}
	}
}
process.exit(bad ? 1 : 0);
