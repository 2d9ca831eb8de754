package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"
)

// Media types of the OCI image specification.
const (
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
	// refAnnotation names the image in an OCI layout's index.
	refAnnotation = "org.opencontainers.image.ref.name"
	// containerdName is the full name containerd and Docker give a loaded image.
	containerdName = "io.containerd.image.name"
)

// File is one file of the image's layer.
type File struct {
	Path string // absolute path in the image, e.g. /usr/local/bin/run
	Mode int64  // permission bits, e.g. 0o755
	Data []byte
}

// Spec is what the image holds besides its files.
type Spec struct {
	Name     string   // repository and tag, e.g. servesim:0.1.0
	OS, Arch string   // e.g. linux, amd64
	Env      []string // e.g. PATH=/usr/local/bin
	Cmd      []string // the default command
	Dirs     []string // empty directories, e.g. /tmp (made world-writable and sticky)
	Created  time.Time
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType,omitempty"`
	Manifests     []descriptor `json:"manifests"`
}

type imageConfig struct {
	Created      string `json:"created,omitempty"`
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		Env []string `json:"Env,omitempty"`
		Cmd []string `json:"Cmd,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// dockerManifest is one entry of the manifest.json that `docker load` reads.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blobPath(digest string) string { return "blobs/sha256/" + strings.TrimPrefix(digest, "sha256:") }

// Write writes the image of files as one tarball to w.
func Write(w io.Writer, spec Spec, files []File) error {
	if spec.Name == "" || !strings.Contains(spec.Name, ":") {
		return fmt.Errorf("ociimage: image name %q needs a tag (name:tag)", spec.Name)
	}
	layerTar, err := layer(spec, files)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed) // no name, no time: the same bytes for the same files
	if _, err := zw.Write(layerTar); err != nil {
		return fmt.Errorf("ociimage: compress layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("ociimage: compress layer: %w", err)
	}
	var cfg imageConfig
	if !spec.Created.IsZero() {
		cfg.Created = spec.Created.UTC().Format(time.RFC3339)
	}
	cfg.Architecture, cfg.OS = spec.Arch, spec.OS
	cfg.Config.Env, cfg.Config.Cmd = spec.Env, spec.Cmd
	cfg.RootFS.Type, cfg.RootFS.DiffIDs = "layers", []string{digestOf(layerTar)}
	cfgJSON, _ := json.Marshal(cfg)
	layerDesc := descriptor{MediaType: mediaLayer, Digest: digestOf(gz.Bytes()), Size: int64(gz.Len())}
	cfgDesc := descriptor{MediaType: mediaConfig, Digest: digestOf(cfgJSON), Size: int64(len(cfgJSON))}
	man, _ := json.Marshal(manifest{SchemaVersion: 2, MediaType: mediaManifest, Config: cfgDesc, Layers: []descriptor{layerDesc}})
	manDesc := descriptor{MediaType: mediaManifest, Digest: digestOf(man), Size: int64(len(man)),
		Annotations: map[string]string{refAnnotation: spec.Name[strings.LastIndex(spec.Name, ":")+1:], containerdName: spec.Name}}
	idx, _ := json.Marshal(index{SchemaVersion: 2, MediaType: "application/vnd.oci.image.index.v1+json", Manifests: []descriptor{manDesc}})
	docker, _ := json.Marshal([]dockerManifest{{Config: blobPath(cfgDesc.Digest), RepoTags: []string{spec.Name}, Layers: []string{blobPath(layerDesc.Digest)}}})

	tw := tar.NewWriter(w)
	for _, e := range []struct {
		name string
		data []byte
	}{
		{"blobs/", nil}, {"blobs/sha256/", nil},
		{blobPath(cfgDesc.Digest), cfgJSON}, {blobPath(layerDesc.Digest), gz.Bytes()}, {blobPath(manDesc.Digest), man},
		{"index.json", idx}, {"manifest.json", docker}, {"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
	} {
		if err := writeEntry(tw, e.name, 0o644, e.data, spec.Created); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("ociimage: write image: %w", err)
	}
	return nil
}

// layer is the uncompressed tar of the files, their parent directories and
// the empty directories, in path order, owned by root, stamped spec.Created.
func layer(spec Spec, files []File) ([]byte, error) {
	dirs := map[string]int64{}
	for _, d := range spec.Dirs {
		dirs[strings.Trim(path.Clean(d), "/")+"/"] = 0o1777
	}
	seen := map[string]bool{}
	for _, f := range files {
		p := path.Clean(f.Path)
		if !path.IsAbs(f.Path) || p == "/" || seen[p] {
			return nil, fmt.Errorf("ociimage: file path %q: want an absolute path to a file, given once", f.Path)
		}
		seen[p] = true
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := dirs[d[1:]+"/"]; !ok {
				dirs[d[1:]+"/"] = 0o755
			}
		}
	}
	var names []string
	for d := range dirs {
		names = append(names, d)
	}
	slices.Sort(names)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, d := range names {
		if err := writeEntry(tw, d, dirs[d], nil, spec.Created); err != nil {
			return nil, err
		}
	}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for _, f := range sorted {
		if err := writeEntry(tw, strings.TrimPrefix(path.Clean(f.Path), "/"), f.Mode, f.Data, spec.Created); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("ociimage: write layer: %w", err)
	}
	return b.Bytes(), nil
}

// writeEntry writes a directory (name ending in /) or a regular file.
func writeEntry(tw *tar.Writer, name string, mode int64, data []byte, mtime time.Time) error {
	if mtime.IsZero() {
		mtime = time.Unix(0, 0)
	}
	h := &tar.Header{Name: name, Mode: mode, ModTime: mtime, Typeflag: tar.TypeReg, Size: int64(len(data))}
	if strings.HasSuffix(name, "/") {
		h.Typeflag, h.Size = tar.TypeDir, 0
		h.Mode |= 0o755
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("ociimage: write %s: %w", name, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("ociimage: write %s: %w", name, err)
	}
	return nil
}
