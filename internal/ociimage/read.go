package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxBlob bounds one entry of an image tarball, and of its layer, before
// it is read into memory.
const maxBlob = 1 << 30

// Image is what Read found in a tarball.
type Image struct {
	Name     string // as index.json names it (io.containerd.image.name)
	RepoTags []string
	OS, Arch string
	Env, Cmd []string
	Files    []File // regular files of the layer, paths absolute
}

// Read reads an image tarball written by Write (or any single-image OCI
// archive with gzip layers) and checks it as a runtime would: index.json
// names one manifest, every blob's sha256 is its name, the config's diff id
// is the sha256 of the uncompressed layer, and manifest.json (for docker
// load) points at the same config and layers.
func Read(r io.Reader) (*Image, error) {
	blobs := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ociimage: read image: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Size > maxBlob {
			return nil, fmt.Errorf("ociimage: %s is %d bytes, over %d", h.Name, h.Size, maxBlob)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("ociimage: read %s: %w", h.Name, err)
		}
		blobs[strings.TrimPrefix(h.Name, "./")] = b
	}
	blob := func(d descriptor) ([]byte, error) {
		b, ok := blobs[blobPath(d.Digest)]
		switch {
		case !ok:
			return nil, fmt.Errorf("ociimage: blob %s is missing", d.Digest)
		case digestOf(b) != d.Digest || int64(len(b)) != d.Size:
			return nil, fmt.Errorf("ociimage: blob %s does not match its digest or size", d.Digest)
		}
		return b, nil
	}
	var idx index
	if err := json.Unmarshal(blobs["index.json"], &idx); err != nil || len(idx.Manifests) != 1 {
		return nil, fmt.Errorf("ociimage: index.json must name one manifest (%v)", err)
	}
	img := &Image{Name: idx.Manifests[0].Annotations[containerdName]}
	manJSON, err := blob(idx.Manifests[0])
	if err != nil {
		return nil, err
	}
	var man manifest
	if err := json.Unmarshal(manJSON, &man); err != nil || len(man.Layers) != 1 {
		return nil, fmt.Errorf("ociimage: the manifest must list one layer (%v)", err)
	}
	cfgJSON, err := blob(man.Config)
	if err != nil {
		return nil, err
	}
	var cfg imageConfig
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		return nil, fmt.Errorf("ociimage: config: %w", err)
	}
	img.OS, img.Arch, img.Env, img.Cmd = cfg.OS, cfg.Architecture, cfg.Config.Env, cfg.Config.Cmd
	var docker []dockerManifest
	if err := json.Unmarshal(blobs["manifest.json"], &docker); err != nil || len(docker) != 1 ||
		docker[0].Config != blobPath(man.Config.Digest) || !slices.Equal(docker[0].Layers, []string{blobPath(man.Layers[0].Digest)}) {
		return nil, fmt.Errorf("ociimage: manifest.json does not name the OCI manifest's config and layer (%v)", err)
	}
	img.RepoTags = docker[0].RepoTags
	gz, err := blob(man.Layers[0])
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("ociimage: layer: %w", err)
	}
	layerTar, err := io.ReadAll(io.LimitReader(zr, maxBlob+1))
	if err != nil || len(layerTar) > maxBlob {
		return nil, fmt.Errorf("ociimage: layer: over %d bytes or unreadable (%v)", maxBlob, err)
	}
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != digestOf(layerTar) {
		return nil, fmt.Errorf("ociimage: the config's diff id is not the layer's")
	}
	lr := tar.NewReader(bytes.NewReader(layerTar))
	for {
		h, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ociimage: layer: %w", err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(lr)
			if err != nil {
				return nil, fmt.Errorf("ociimage: layer: %s: %w", h.Name, err)
			}
			img.Files = append(img.Files, File{Path: "/" + strings.TrimPrefix(h.Name, "/"), Mode: h.Mode, Data: b})
		}
	}
	return img, nil
}
