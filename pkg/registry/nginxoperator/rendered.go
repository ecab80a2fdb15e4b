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

package nginxoperator

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/kubernetes"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

// RenderedREST serves GET nginxoperators/NAME/rendered: the files the nginx container
// of the NginxOperator's pods finds in its mounts, read from its Deployment (the pod
// template as the controller wrote it) and the ConfigMaps that template names. A
// ConfigMap's data is shown only to a reader the cluster lets get that ConfigMap (asked
// with a SubjectAccessReview as the reader), but for the inline configuration's, which the
// NginxOperator controls and whose data is its spec; a Secret's data never. The apiserver
// reads the Deployment and the ConfigMaps with its own identity (get on deployments and
// configmaps), only after that check.
type RenderedREST struct {
	store      *genericregistry.Store
	cluster    kubernetes.Interface
	authorizer authorizer.Authorizer
}

var _ rest.Getter = &RenderedREST{}

// New returns an empty view.
func (r *RenderedREST) New() runtime.Object { return &operator.NginxOperatorRendered{} }

// Destroy is a no-op: the main resource owns the shared store.
func (r *RenderedREST) Destroy() {}

// Get renders the NginxOperator called name.
func (r *RenderedREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	got, err := r.store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	no := got.(*operator.NginxOperator)
	if r.cluster == nil {
		return nil, apierrors.NewServiceUnavailable("the rendered view reads the cluster's Deployments and ConfigMaps, and this apiserver runs without a cluster (standalone)")
	}
	view := &operator.NginxOperatorRendered{ObjectMeta: metav1.ObjectMeta{Name: no.Name, Namespace: no.Namespace, UID: no.UID, ResourceVersion: no.ResourceVersion}}
	deployment, err := r.cluster.AppsV1().Deployments(no.Namespace).Get(ctx, no.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		view.Message = fmt.Sprintf("no Deployment %s yet: the controller has not created it", no.Name)
		return view, nil
	case err != nil:
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("reading Deployment %s: %v", no.Name, err))
	}
	if owner := metav1.GetControllerOfNoCopy(deployment); owner == nil || owner.UID != no.UID {
		view.Message = fmt.Sprintf("Deployment %s is not this NginxOperator's: nothing of it is shown", no.Name)
		return view, nil
	}
	view.Deployment, view.Generation = deployment.Name, deployment.Generation
	view.Files = r.files(ctx, no, deployment)
	return view, nil
}

// files resolves every mount of the nginx container.
func (r *RenderedREST) files(ctx context.Context, no *operator.NginxOperator, deployment *appsv1.Deployment) []operator.RenderedFile {
	template := &deployment.Spec.Template
	volumes := map[string]*corev1.Volume{}
	for i := range template.Spec.Volumes {
		volumes[template.Spec.Volumes[i].Name] = &template.Spec.Volumes[i]
	}
	var nginx *corev1.Container
	for i := range template.Spec.Containers {
		if template.Spec.Containers[i].Name == operand.ContainerName {
			nginx = &template.Spec.Containers[i]
		}
	}
	if nginx == nil {
		return nil
	}
	configMaps := configMapReader{rest: r, ctx: ctx, no: no, read: map[string]*configMapRead{}}
	var files []operator.RenderedFile
	mainConfig := false
	for _, m := range nginx.VolumeMounts {
		v := volumes[m.Name]
		if v == nil {
			continue
		}
		for _, f := range volumeFiles(v, template, &configMaps) {
			if m.SubPath != "" {
				if f.Path != m.SubPath {
					continue
				}
				f.Path = m.MountPath
			} else {
				f.Path = path.Join(m.MountPath, f.Path)
			}
			mainConfig = mainConfig || f.Path == operand.ConfigPath
			files = append(files, f)
		}
	}
	if !mainConfig {
		files = append(files, operator.RenderedFile{Path: operand.ConfigPath, Source: "the image " + nginx.Image, Withheld: "the image's own file"})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files
}

// volumeFiles lists a volume's files, with paths relative to where it is mounted.
func volumeFiles(v *corev1.Volume, template *corev1.PodTemplateSpec, configMaps *configMapReader) []operator.RenderedFile {
	switch {
	case v.ConfigMap != nil:
		read := configMaps.get(v.ConfigMap.Name)
		source := "ConfigMap " + v.ConfigMap.Name
		if read.withheld != "" {
			return []operator.RenderedFile{{Path: "", Source: source, Withheld: read.withheld}}
		}
		return keyFiles(source, v.ConfigMap.Items, read.data, read.binary)
	case v.Secret != nil:
		source := "Secret " + v.Secret.SecretName
		if len(v.Secret.Items) == 0 {
			return []operator.RenderedFile{{Path: "", Source: source, Withheld: "a Secret's data is never shown"}}
		}
		var files []operator.RenderedFile
		for _, item := range v.Secret.Items {
			files = append(files, operator.RenderedFile{Path: item.Path, Source: source + ", key " + item.Key, Withheld: "a Secret's data is never shown"})
		}
		return files
	case v.DownwardAPI != nil:
		var files []operator.RenderedFile
		for _, item := range v.DownwardAPI.Items {
			f := operator.RenderedFile{Path: item.Path, Source: "the pod's " + fieldPath(item)}
			key, ok := annotationKey(item)
			content, inTemplate := template.Annotations[key]
			switch {
			case !ok:
				f.Withheld = "known only in the pod"
			case !inTemplate:
				f.Withheld = "set on each pod, not in the pod template"
			default:
				f.Content = content
			}
			files = append(files, f)
		}
		return files
	case v.EmptyDir != nil:
		return []operator.RenderedFile{{Path: "", Source: "emptyDir " + v.Name, Withheld: "written while the pod runs"}}
	}
	return []operator.RenderedFile{{Path: "", Source: "volume " + v.Name, Withheld: "not a configuration source"}}
}

// keyFiles are a ConfigMap's keys as files: items when the volume names them, else every key.
func keyFiles(source string, items []corev1.KeyToPath, data map[string]string, binary map[string][]byte) []operator.RenderedFile {
	if len(items) == 0 {
		for key := range data {
			items = append(items, corev1.KeyToPath{Key: key, Path: key})
		}
		for key := range binary {
			items = append(items, corev1.KeyToPath{Key: key, Path: key})
		}
	}
	files := make([]operator.RenderedFile, 0, len(items))
	for _, item := range items {
		f := operator.RenderedFile{Path: item.Path, Source: source + ", key " + item.Key}
		content, text := data[item.Key]
		switch _, bin := binary[item.Key]; {
		case text:
			f.Content = content
		case bin:
			f.Withheld = "binary data"
		default:
			f.Withheld = "no such key"
		}
		files = append(files, f)
	}
	return files
}

var annotationRef = regexp.MustCompile(`^metadata\.annotations\['([^']+)'\]$`)

func annotationKey(item corev1.DownwardAPIVolumeFile) (string, bool) {
	if item.FieldRef == nil {
		return "", false
	}
	m := annotationRef.FindStringSubmatch(item.FieldRef.FieldPath)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func fieldPath(item corev1.DownwardAPIVolumeFile) string {
	if item.FieldRef != nil {
		return item.FieldRef.FieldPath
	}
	if item.ResourceFieldRef != nil {
		return "resource " + item.ResourceFieldRef.Resource
	}
	return "downward API"
}

// configMapRead is a ConfigMap's data, or why it is withheld.
type configMapRead struct {
	data     map[string]string
	binary   map[string][]byte
	withheld string
}

// configMapReader reads each ConfigMap once, after asking whether the reader may.
type configMapReader struct {
	rest *RenderedREST
	ctx  context.Context
	no   *operator.NginxOperator
	read map[string]*configMapRead
}

func (c *configMapReader) get(name string) *configMapRead {
	if read, ok := c.read[name]; ok {
		return read
	}
	read := &configMapRead{}
	c.read[name] = read
	cm, err := c.rest.cluster.CoreV1().ConfigMaps(c.no.Namespace).Get(c.ctx, name, metav1.GetOptions{})
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		read.withheld = "the apiserver could not read it: " + err.Error()
		return read
	}
	// The inline configuration's own ConfigMap holds what the spec holds; any other is
	// shown to whom may get it, and a missing one is told only to them too.
	if owner := ownerOf(cm); missing || owner == nil || owner.UID != c.no.UID {
		if why := c.rest.mayGet(c.ctx, c.no.Namespace, name); why != "" {
			read.withheld = why
			return read
		}
	}
	if missing {
		read.withheld = "the ConfigMap does not exist"
		return read
	}
	read.data, read.binary = cm.Data, cm.BinaryData
	return read
}

// mayGet asks whether the reader may get the ConfigMap; "" means yes, else why not.
func (r *RenderedREST) mayGet(ctx context.Context, namespace, name string) string {
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return "no user in the request"
	}
	decision, _, err := r.authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: user, Verb: "get", Resource: "configmaps", Namespace: namespace, Name: name, ResourceRequest: true, APIVersion: "v1",
	})
	if decision == authorizer.DecisionAllow {
		return ""
	}
	if err != nil {
		return "the authorizer failed: " + err.Error()
	}
	return fmt.Sprintf("user %q may not get ConfigMap %s", user.GetName(), strings.TrimSpace(name))
}

func ownerOf(cm *corev1.ConfigMap) *metav1.OwnerReference {
	if cm == nil {
		return nil
	}
	return metav1.GetControllerOfNoCopy(cm)
}
