// Package ociimage writes and reads the container image of the suite: a
// single-layer OCI image, from no base, holding the four static binaries,
// as one tarball that both an OCI image layout and `docker load` read
// (index.json and oci-layout beside Docker's manifest.json, one set of
// blobs). It needs no daemon and no registry: the image is built from
// files on disk with the standard library, byte for byte the same for the
// same files. Read checks a tarball the way a runtime would (every digest,
// the layer's diff id) and lists what the layer holds, for the build's test.
//
// It is a leaf: it knows nothing of what the files are.
package ociimage
