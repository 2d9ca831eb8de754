// Package jsonscan is the project's JSON scanner, for the hot paths that
// read a few fields of many small documents (a streamed response's chunks,
// a trace's lines, a million SimResults) without decoding them into maps
// or structs.
//
// It has two layers. The lexical steps (Space, String, Number, Literal,
// Value) read one token or value of a byte slice and return where it ends
// or why the bytes are not JSON there; a Status with More set says the
// slice ended first, so a reader of a stream keeps a window of its input,
// reads more and steps again. Scanner reads one whole document with them:
// it reads what the caller asks for and skips, while validating, the rest,
// without allocating; it never unescapes values (only keys with escapes,
// rare), and its errors name the byte ("invalid JSON at byte 12: ...").
//
// It is a leaf: it knows no other package of the module.
package jsonscan
