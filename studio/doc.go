// Package studio is a builder for ilmek graph documents: an http.Handler,
// mounted beside package server, that serves a page to browse the
// application's node types, draw a graph on a canvas, check it live and
// publish it safely, and the JSON API the page uses (OpenAPI at
// GET api/openapi.json).
//
// The studio uses only the document (package spec), the diagrams (package
// mermaid) and the runtime's public API; the engine does not know it
// exists, and neither package server nor package runtime depends on it.
//
// What it serves:
//
//   - the registry browser: the node types the application declares
//     (Config.NodeTypes: a description, a category and the JSON Schema of the
//     config, which `ilmekgen schema --config` prints at go generate time
//     and the application hands in), each type of Config.Registry listed,
//     and the runtime's "subgraph" type (spec.SubgraphType) with a form of
//     its own: the child picked from the published graphs the principal
//     may view (GET api/subgraphs), an optional pin of its fingerprint, and
//     the in and out channel maps as pairs whose choices are the child's
//     and the parent's channels;
//   - opening a child: from a subgraph node on the canvas (its "open"
//     button, a double click, or the inspector), the child's published
//     version read-only or its draft to edit, and back to the parent by the
//     breadcrumb (or Alt+Up), with the parent's unsaved edits kept;
//   - documents with history: create, open, rename and delete documents;
//     every save is a draft revision (its canonical form when it decodes,
//     so a document opened and saved unchanged is byte-identical, with its
//     "x-" members kept); publishing a revision without errors makes a
//     version (its fingerprint) that services fetch by name with
//     GET api/published/{name} (FetchPublished) and run with runtime.Load;
//   - live checking: POST api/check runs the decoder and validator of
//     `ilmekgen check` and builds each node's config with its type's
//     factory, checks each subgraph node against the published versions as
//     runtime.FromSpec checks it against the children WithSubgraphs hands
//     it (spec.CheckSubgraphs: an unknown child, a stale pin, a channel
//     either graph does not declare, reducers that disagree, a cycle), and
//     answers the diagnostics placed on the node or edge they are about,
//     the canonical form, the fingerprint and the §9.1 diagram;
//   - publishing safely: GET api/documents/{id}/review compares a revision
//     with the published version (spec.Compare) and lists the paused
//     threads the change touches (runtime.AffectedThreads over
//     Config.Checkpointer, both versions built with the published children
//     of their subgraph nodes); publishing an unsafe change, or one that
//     touches a thread, is refused with 409 unless the request confirms it.
//
// Storage is a Repository: NewMemory, package studio/sqlite and package
// studio/postgres (each with its numbered migrations embedded).
//
// The page is React and React Flow (@xyflow/react), bundled by the module
// studio/bundle with esbuild at go generate time and embedded, so users
// need no Node.js; it loads nothing from elsewhere and is served with a
// strict Content-Security-Policy. Canvas positions live in an "x-studio"
// member of each node, which the fingerprint leaves out: moving a node
// does not change the version. The Diagram tab draws SVG through Config.RenderSVG
// when the application sets it (the server's hook; package graphviz is
// not imported here), and the Mermaid text otherwise. A draft the canvas
// cannot draw (its nodes, edges or channels of another kind than the
// document's, or text that is not JSON), which the studio stores as
// written, opens as one line per problem naming the member
// ("nodes: is an object, not a list") and its text in the JSON tab, as
// stored: nothing is saved over it until it is fixed there. Long node ids
// are cut with an ellipsis in their node (whole in its tooltip) and wrap
// in the panels.
//
// Security defaults are the server's: New refuses a Config without
// Authenticate; the default Access (OwnerOnly) lets a principal view,
// edit and publish only the documents it created, and a document it may
// not view answers 404 as a missing one does; request bodies are bounded;
// an unexpected error is logged with an id and answered 500 with only
// that id.
package studio

//go:generate go run -C bundle . -out ../ui
