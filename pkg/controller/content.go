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

package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// mountedContent hashes what spec.config, spec.files and spec.tls mount, reading the
// referenced ConfigMaps and Secrets from the API server (only their metadata is cached).
// problems lists references the pods cannot mount as they are: a missing ConfigMap,
// Secret or key. The hash is "" when nothing is mounted, so a spec without mounts keeps
// the pod template it always had.
func (r *Reconciler) mountedContent(ctx context.Context, no *v1alpha2.NginxOperator) (hash string, problems []string, err error) {
	spec := &no.Spec
	if spec.Config == nil && len(spec.Files) == 0 && len(spec.TLS) == 0 {
		return "", nil, nil
	}
	h := sha256.New()
	if cfg := spec.Config; cfg != nil {
		if ref := cfg.ConfigMapKeyRef; ref != nil {
			cm, found, err := r.getConfigMap(ctx, no.Namespace, ref.Name)
			switch {
			case err != nil:
				return "", nil, err
			case !found:
				problems = append(problems, fmt.Sprintf("spec.config.configMapKeyRef: ConfigMap %s not found", ref.Name))
			default:
				value, hasKey := cm.Data[ref.Key]
				if !hasKey {
					problems = append(problems, fmt.Sprintf("spec.config.configMapKeyRef: ConfigMap %s has no key %q", ref.Name, ref.Key))
				}
				writeEntry(h, "config", ref.Key, []byte(value))
			}
		} else {
			writeEntry(h, "config", configFileName, []byte(cfg.Inline))
		}
	}
	for i, f := range spec.Files {
		cm, found, err := r.getConfigMap(ctx, no.Namespace, f.ConfigMapName)
		if err != nil {
			return "", nil, err
		}
		if !found {
			problems = append(problems, fmt.Sprintf("spec.files[%d]: ConfigMap %s not found", i, f.ConfigMapName))
			continue
		}
		label := "files:" + f.MountPath
		for _, k := range sortedKeys(cm.Data) {
			writeEntry(h, label, k, []byte(cm.Data[k]))
		}
		for _, k := range sortedKeys(cm.BinaryData) {
			writeEntry(h, label, k, cm.BinaryData[k])
		}
	}
	for i, t := range spec.TLS {
		secret := &corev1.Secret{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: no.Namespace, Name: t.SecretName}, secret)
		switch {
		case apierrors.IsNotFound(err):
			problems = append(problems, fmt.Sprintf("spec.tls[%d]: Secret %s not found", i, t.SecretName))
			continue
		case err != nil:
			return "", nil, err
		case secret.Type != corev1.SecretTypeTLS:
			problems = append(problems, fmt.Sprintf("spec.tls[%d]: Secret %s is of type %s, not %s", i, t.SecretName, secret.Type, corev1.SecretTypeTLS))
		}
		for _, k := range sortedKeys(secret.Data) {
			writeEntry(h, "tls:"+t.SecretName, k, secret.Data[k])
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), problems, nil
}

func (r *Reconciler) getConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, bool, error) {
	cm := &corev1.ConfigMap{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	return cm, err == nil, err
}

// writeEntry writes one file unambiguously: lengths before contents.
func writeEntry(w io.Writer, source, key string, value []byte) {
	fmt.Fprintf(w, "%d:%s%d:%s%d:", len(source), source, len(key), key, len(value))
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
