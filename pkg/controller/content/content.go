/*
Copyright The nginx-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package content

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// Mounted is what spec.config, spec.files and spec.tls mount, as Tracker.Mounted found it.
type Mounted struct {
	// Hash covers all of it; "" when nothing is mounted, so a spec without mounts keeps
	// the pod template it always had.
	Hash string
	// Volumes has the reload.ContentHash of each content volume's files, by volume name,
	// for Reload mode.
	Volumes map[string]string
	// Problems lists references the pods cannot mount as they are: a missing ConfigMap or
	// key; the pods wait for them.
	Problems []string
	// Refused lists references that are not mounted: a Secret in spec.tls that is missing
	// or not of type kubernetes.io/tls, in words that do not tell which.
	Refused []string
	// ConfigMaps are the digests of what the pods mount of each ConfigMap that exists with
	// its key, for status.configMapDigests: a change of one is a revision.
	ConfigMaps []v1alpha2.ConfigMapDigest
}

// Mounted hashes what spec.config, spec.files and spec.tls mount.
func (t *Tracker) Mounted(ctx context.Context, c Cluster, no *v1alpha2.NginxOperator) (Mounted, error) {
	var m Mounted
	var err error
	m.Hash, m.Volumes, err = t.mountedContent(ctx, c, no, &m)
	return m, err
}

// mountedContent hashes the mounts and fills found's problems, refusals and ConfigMap
// digests.
func (t *Tracker) mountedContent(ctx context.Context, c Cluster, no *v1alpha2.NginxOperator, found *Mounted) (hash string, volumes map[string]string, err error) {
	spec := &no.Spec
	if spec.Config == nil && len(spec.Files) == 0 && len(spec.TLS) == 0 {
		return "", nil, nil
	}
	h := sha256.New()
	volumes = map[string]string{}
	add := func(what, volume string, ref mountRef) error {
		d, err := t.digest(ctx, c, no.Namespace, ref)
		if err != nil {
			return err
		}
		if d.problem != "" {
			found.Problems = append(found.Problems, what+": "+d.problem)
		}
		if d.refused != "" {
			found.Refused = append(found.Refused, what+": "+d.refused)
		}
		if ref.kind == "ConfigMap" && d.problem == "" {
			found.ConfigMaps = append(found.ConfigMaps, v1alpha2.ConfigMapDigest{Name: ref.name, Key: ref.key, Digest: hex.EncodeToString(d.sum[:16])})
		}
		writeEntry(h, what, ref.key, d.sum)
		volumes[volume] = d.files
		return nil
	}
	if cfg := spec.Config; cfg != nil {
		if ref := cfg.ConfigMapKeyRef; ref != nil {
			if err := add("spec.config.configMapKeyRef", builders.ConfigVolumeName, mountRef{kind: "ConfigMap", name: ref.Name, key: ref.Key}); err != nil {
				return "", nil, err
			}
		} else {
			writeEntry(h, "spec.config.inline", builders.ConfigFileName, []byte(cfg.Inline))
			volumes[builders.ConfigVolumeName] = reload.ContentHash(map[string][]byte{builders.ConfigFileName: []byte(cfg.Inline)})
		}
	}
	for i, f := range spec.Files {
		if err := add(fmt.Sprintf("spec.files[%d]", i), builders.FilesVolumeName(i), mountRef{kind: "ConfigMap", name: f.ConfigMapName}); err != nil {
			return "", nil, err
		}
	}
	for i, t := range spec.TLS {
		if err := add(fmt.Sprintf("spec.tls[%d]", i), builders.TLSVolumeName(i), mountRef{kind: "Secret", name: t.SecretName}); err != nil {
			return "", nil, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), volumes, nil
}

// mountRef is a ConfigMap or Secret a spec mounts: one key of it, or all when key is "".
type mountRef struct {
	kind, name, key string
}

// digest is what a mounted object contributes to the hash, at one resourceVersion.
type digest struct {
	resourceVersion string
	sum             []byte
	// files is the reload.ContentHash of the files the kubelet writes of it.
	files string
	// problem says why the pods cannot mount it yet; "" when they can.
	problem string
	// refused says why it is never mounted, whatever the pods could do; "" when it may be.
	refused string
}

// digest returns the digest of a mounted object, reading it only when the metadata cache
// shows a resourceVersion it has not hashed.
func (t *Tracker) digest(ctx context.Context, c Cluster, namespace string, ref mountRef) (digest, error) {
	nn := types.NamespacedName{Namespace: namespace, Name: ref.name}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(ref.kind))
	if err := c.Client.Get(ctx, nn, meta); err != nil {
		if apierrors.IsNotFound(err) {
			t.digests.forget(nn, ref)
			return missing(ref), nil
		}
		return digest{}, err
	}
	if d, ok := t.digests.get(nn, ref); ok && d.resourceVersion == meta.ResourceVersion {
		return d, nil
	}
	// The content is needed here, and only here: the hash of what the pods mount (a
	// renewed certificate must roll them) and a Secret's type. So exactly this object is
	// read, uncached, from the API server; the cache holds the metadata of ConfigMaps and
	// Secrets only, never their data (a cached full Get would start an informer holding
	// every Secret of the watched namespaces in memory).
	var obj client.Object = &corev1.ConfigMap{}
	if ref.kind == "Secret" {
		obj = &corev1.Secret{}
	}
	if err := c.APIReader.Get(ctx, nn, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return missing(ref), nil
		}
		return digest{}, err
	}
	d := digestOf(obj, ref)
	t.digests.put(nn, ref, d)
	return d, nil
}

// missing is the digest of a referenced object that does not exist. The pods wait for a
// ConfigMap; a Secret is refused as one of the wrong type is, with the same words, so that
// status, which readers without access to Secrets see, does not tell whether it exists.
func missing(ref mountRef) digest {
	if ref.kind == "Secret" {
		return digest{refused: unmountableSecret(ref.name)}
	}
	return digest{problem: fmt.Sprintf("%s %s not found", ref.kind, ref.name)}
}

// unmountableSecret says why a Secret in spec.tls is not mounted, missing or not.
func unmountableSecret(name string) string {
	return fmt.Sprintf("Secret %s is missing or not of type %s; only %s Secrets are mounted", name, corev1.SecretTypeTLS, corev1.SecretTypeTLS)
}

// digestOf hashes the mounted part of a ConfigMap or Secret and says what keeps the pods
// from mounting it.
func digestOf(obj client.Object, ref mountRef) digest {
	h := sha256.New()
	d := digest{resourceVersion: obj.GetResourceVersion()}
	files := map[string][]byte{}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		if ref.key != "" {
			value, found := o.Data[ref.key]
			if !found {
				d.problem = fmt.Sprintf("ConfigMap %s has no key %q", ref.name, ref.key)
			}
			writeEntry(h, "data", ref.key, []byte(value))
			// The key is mounted under the name nginx.conf (builders/mounts.go).
			files[builders.ConfigFileName] = []byte(value)
			break
		}
		for _, k := range sortedKeys(o.Data) {
			writeEntry(h, "data", k, []byte(o.Data[k]))
			files[k] = []byte(o.Data[k])
		}
		for _, k := range sortedKeys(o.BinaryData) {
			writeEntry(h, "binaryData", k, o.BinaryData[k])
			files[k] = o.BinaryData[k]
		}
	case *corev1.Secret:
		// spec.tls serves a certificate: a Secret of another type (a password, a token) is
		// never put where nginx could serve it.
		if o.Type != corev1.SecretTypeTLS {
			d.refused = unmountableSecret(ref.name)
		}
		for _, k := range sortedKeys(o.Data) {
			writeEntry(h, "data", k, o.Data[k])
			files[k] = o.Data[k]
		}
	}
	d.sum = h.Sum(nil)
	d.files = reload.ContentHash(files)
	return d
}

// writeEntry writes one file unambiguously: lengths before contents.
func writeEntry(w io.Writer, source, key string, value []byte) {
	// w is a hash, whose writes never fail.
	_, _ = fmt.Fprintf(w, "%d:%s%d:%s%d:", len(source), source, len(key), key, len(value))
	_, _ = w.Write(value)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
