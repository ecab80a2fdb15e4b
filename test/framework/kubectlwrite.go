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

package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// Besides their reads, the tests create namespaces and objects, change them, delete them,
// grant and check rights and wait for conditions hundreds of times per make test, where
// kubectl is not the subject. writeRequest answers the common forms in process, printing
// what kubectl prints: `create namespace NAME`; `create -f -` (objects from YAML on stdin,
// --dry-run=server too); `apply -f -` of objects none of which exists yet (kubectlapply.go);
// `delete TYPE NAME...` or `delete TYPE/NAME...` with --ignore-not-found, --wait and
// --timeout; `wait --for=condition=TYPE[=STATUS] TYPE/NAME...` or `TYPE NAME...` with
// --timeout; and, on one object, `patch` (-p, --type, --subresource), `scale --replicas`,
// `label KEY=VALUE... KEY-...` (--overwrite) (kubectlchange.go); `create role` (--verb,
// --resource, --resource-name), `create rolebinding` (--role or --clusterrole, --user,
// --group, --serviceaccount) and `auth can-i VERB TYPE[/NAME]` (--subresource)
// (kubectlrbac.go); each with -n, --as and --as-group. Anything else runs kubectl itself,
// as does a request whose types discovery cannot name yet: a write is decided in full
// before anything is sent.
type writeRequest struct {
	verb      string // create-namespace, create, apply, delete, wait, patch, scale, label, create-role, create-rolebinding or can-i
	namespace string
	as        string
	asGroups  []string
	filename  string   // create, apply: "-"
	dryRun    bool     // create: --dry-run=server
	args      []string // create-namespace, create-role(binding): NAME; can-i: VERB TYPE[/NAME]; others: TYPE NAME... or TYPE/NAME...

	ignoreMissing bool
	wait          bool          // delete: wait until the objects are gone (kubectl's default)
	timeout       time.Duration // delete: 0 waits as long as the call may; wait: default 30s
	condition     string        // wait
	status        string        // wait: the condition's status, default True

	patch, patchType string   // patch: -p and --type (default strategic)
	subresource      string   // patch, can-i
	replicas         int      // scale
	labels           []string // label: KEY=VALUE or KEY-
	overwrite        bool     // label

	verbs, resources, resourceNames []string // create role
	role, clusterRole               string   // create rolebinding
	users, groups, serviceAccounts  []string // create rolebinding
}

// parseWrite returns the request args make, or false when kubectl itself must answer them.
func parseWrite(args []string) (writeRequest, bool) {
	r := writeRequest{wait: true}
	timeout, forFlag, replicas, dryRun := "", "", "", ""
	waitSet, dryRunAlone := false, false
	positional, ok := scanArgs(args, func(arg string) bool {
		switch arg {
		case "--ignore-not-found", "--ignore-not-found=true":
			r.ignoreMissing = true
		case "--wait=false":
			r.wait, waitSet = false, true
		case "--wait", "--wait=true":
			r.wait, waitSet = true, true
		case "--overwrite", "--overwrite=true":
			r.overwrite = true
		case "--dry-run": // kubectl's deprecated form, without a value
			dryRunAlone = true
		default:
			return false
		}
		return true
	}, []valueFlag{
		{names: []string{"-n", "--namespace"}, into: &r.namespace},
		{names: []string{"-f", "--filename"}, into: &r.filename},
		{names: []string{"--as"}, into: &r.as},
		{names: []string{"--as-group"}, list: &r.asGroups},
		{names: []string{"--timeout"}, into: &timeout},
		{names: []string{"--for"}, into: &forFlag},
		{names: []string{"-p", "--patch"}, into: &r.patch},
		{names: []string{"--type"}, into: &r.patchType},
		{names: []string{"--subresource"}, into: &r.subresource},
		{names: []string{"--replicas"}, into: &replicas},
		{names: []string{"--dry-run"}, into: &dryRun},
		{names: []string{"--verb"}, list: &r.verbs},
		{names: []string{"--resource"}, list: &r.resources},
		{names: []string{"--resource-name"}, list: &r.resourceNames},
		{names: []string{"--role"}, into: &r.role},
		{names: []string{"--clusterrole"}, into: &r.clusterRole},
		{names: []string{"--user"}, list: &r.users},
		{names: []string{"--group"}, list: &r.groups},
		{names: []string{"--serviceaccount"}, list: &r.serviceAccounts},
	})
	if !ok || len(positional) == 0 || dryRunAlone {
		return r, false
	}
	switch dryRun {
	case "", "none":
	case "server":
		r.dryRun = true
	default:
		return r, false // client: kubectl prints the object without sending it
	}
	// The flags given besides -n, --as and --as-group, which each verb checks it takes.
	given := map[string]bool{
		"filename": r.filename != "", "timeout": timeout != "", "for": forFlag != "",
		"ignore-not-found": r.ignoreMissing, "wait": waitSet, "overwrite": r.overwrite,
		"patch": r.patch != "", "type": r.patchType != "", "subresource": r.subresource != "",
		"replicas": replicas != "", "dry-run": dryRun != "", "verb": len(r.verbs) > 0, "resource": len(r.resources) > 0,
		"resource-name": len(r.resourceNames) > 0, "role": r.role != "", "clusterrole": r.clusterRole != "",
		"user": len(r.users) > 0, "group": len(r.groups) > 0, "serviceaccount": len(r.serviceAccounts) > 0,
	}
	only := func(flags ...string) bool {
		for flag, set := range given {
			if set && !slices.Contains(flags, flag) {
				return false
			}
		}
		return true
	}
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d < 0 {
			return r, false
		}
		r.timeout = d
	}
	verb, rest := positional[0], positional[1:]
	switch {
	case verb == "create" && len(rest) == 2 && (rest[0] == "namespace" || rest[0] == "ns"):
		r.verb, r.args = "create-namespace", rest[1:]
		return r, only()
	case verb == "create" && len(rest) == 0:
		r.verb = "create"
		return r, r.filename == "-" && only("filename", "dry-run")
	case verb == "apply" && len(rest) == 0:
		r.verb = "apply"
		return r, r.filename == "-" && only("filename")
	case verb == "create" && len(rest) == 2 && rest[0] == "role":
		r.verb, r.args = "create-role", rest[1:]
		return r, len(r.verbs) > 0 && len(r.resources) > 0 && only("verb", "resource", "resource-name")
	case verb == "create" && len(rest) == 2 && rest[0] == "rolebinding":
		r.verb, r.args = "create-rolebinding", rest[1:]
		return r, (r.role == "") != (r.clusterRole == "") && only("role", "clusterrole", "user", "group", "serviceaccount")
	case verb == "auth" && len(rest) == 3 && rest[0] == "can-i":
		r.verb, r.args = "can-i", rest[1:]
		return r, !strings.HasPrefix(r.args[1], "/") && only("subresource")
	case verb == "delete":
		r.verb, r.args = "delete", rest
		if !only("ignore-not-found", "wait", "timeout") {
			return r, false
		}
	case verb == "wait":
		condition, ok := strings.CutPrefix(forFlag, "condition=")
		if !ok || condition == "" || !only("for", "timeout") {
			return r, false
		}
		r.verb, r.args = "wait", rest
		r.condition, r.status, _ = strings.Cut(condition, "=")
		if r.status == "" {
			r.status = "True"
		}
		if timeout == "" {
			r.timeout = 30 * time.Second
		}
	case verb == "patch":
		r.verb, r.args = "patch", rest
		if r.patch == "" || !only("patch", "type", "subresource") {
			return r, false
		}
	case verb == "scale":
		n, err := strconv.Atoi(replicas)
		if err != nil || n < 0 || !only("replicas") {
			return r, false
		}
		r.verb, r.args, r.replicas = "scale", rest, n
	case verb == "label":
		// As kubectl reads them: KEY=VALUE and KEY- are labels, the rest name the object.
		r.verb = "label"
		for _, a := range rest {
			if strings.Contains(a, "=") || strings.HasSuffix(a, "-") {
				r.labels = append(r.labels, a)
			} else {
				r.args = append(r.args, a)
			}
		}
		if len(r.labels) == 0 || !only("overwrite") {
			return r, false
		}
	default:
		return r, false
	}
	if len(r.args) == 0 || strings.Contains(r.args[0], ",") {
		return r, false
	}
	// TYPE NAME... or TYPE/NAME..., not a mix and not a whole type; one object to change.
	slashes := 0
	for _, a := range r.args {
		if strings.Contains(a, "/") {
			slashes++
		}
	}
	objects := len(r.args)
	if slashes == 0 {
		objects--
	}
	switch r.verb {
	case "patch", "scale", "label":
		if objects != 1 {
			return r, false
		}
	}
	return r, objects > 0 && (slashes == 0 || slashes == len(r.args))
}

// kindMapping resolves an object's kind as kubectl's resource builder does, discovering
// the API again once for a kind added since discovery last ran.
func (c *getClients) kindMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, err := c.expander.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		c.mapper.Reset()
		m, err = c.expander.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

// named is one object a delete or wait names.
type named struct {
	typ     string // as written
	mapping *meta.RESTMapping
	name    string
}

// resourceFor is the client of m's resource, in namespace when it is namespaced.
func (c *getClients) resourceFor(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return c.dynamic.Resource(m.Resource)
	}
	return c.dynamic.Resource(m.Resource).Namespace(namespace)
}

// kindName is how kubectl names an object it acted on: kind.group/name ("configmap/a").
func kindName(m *meta.RESTMapping, name string) string {
	kind := strings.ToLower(m.GroupVersionKind.Kind)
	if m.GroupVersionKind.Group != "" {
		kind += "." + m.GroupVersionKind.Group
	}
	return kind + "/" + name
}

// writeInProcess answers r as kubectl would, with stdin, or errKubectlMustAnswer before
// it sent anything.
func writeInProcess(ctx context.Context, kubeconfig string, r writeRequest, stdin string) (stdout, stderr string, err error) {
	c, err := clientsFor(kubeconfig, r.as, r.asGroups)
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	namespace := r.namespace
	if namespace == "" {
		namespace = c.namespace
	}
	switch r.verb {
	case "create-namespace":
		return createNamespace(ctx, c, r.args[0])
	case "create":
		return createObjects(ctx, c, namespace, r.namespace != "", r.dryRun, stdin)
	case "apply":
		return applyNewObjects(ctx, c, namespace, r.namespace != "", stdin)
	case "create-role":
		return createRole(ctx, c, namespace, r)
	case "create-rolebinding":
		return createRoleBinding(ctx, c, namespace, r)
	case "can-i":
		return canI(ctx, c, namespace, r)
	}
	var objects []named
	for i, a := range r.args {
		typ, name, found := strings.Cut(a, "/")
		if !found {
			if i == 0 {
				continue
			}
			typ, name = r.args[0], a
		}
		m, err := c.mapping(typ)
		if err != nil || name == "" {
			return "", "", errKubectlMustAnswer
		}
		if r.verb == "delete" && r.namespace != "" && m.Scope.Name() != meta.RESTScopeNameNamespace {
			return "", "", errKubectlMustAnswer // kubectl warns that -n does not scope it
		}
		objects = append(objects, named{typ, m, name})
	}
	switch r.verb {
	case "delete":
		return deleteObjects(ctx, c, namespace, objects, r)
	case "patch":
		return patchObject(ctx, c, namespace, objects[0], r)
	case "scale":
		return scaleObject(ctx, c, namespace, objects[0], r)
	case "label":
		return labelObject(ctx, c, namespace, objects[0], r)
	}
	return waitForCondition(ctx, c, namespace, objects, r)
}

func createNamespace(ctx context.Context, c *getClients, name string) (stdout, stderr string, err error) {
	m, err := c.mapping("namespaces")
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	created, err := c.resourceFor(m, "").Create(ctx, ns, metav1.CreateOptions{FieldManager: "kubectl-create", FieldValidation: "Strict"})
	if err != nil {
		return "", errorLine(err), err
	}
	return kindName(m, created.GetName()) + " created\n", "", nil
}

// createObjects creates the objects of a YAML stream one after another, as `kubectl
// create -f -` does: each created one printed, the errors of the others printed at the end.
func createObjects(ctx context.Context, c *getClients, namespace string, enforce, dryRun bool, stdin string) (stdout, stderr string, err error) {
	objects, err := decodeObjects(c, namespace, enforce, stdin)
	if err != nil {
		return "", "", err
	}
	options, done := metav1.CreateOptions{FieldManager: "kubectl-create", FieldValidation: "Strict"}, "created"
	if dryRun {
		options.DryRun, done = []string{metav1.DryRunAll}, "created (server dry run)"
	}
	return createEach(ctx, c, objects, options, done)
}

// createEach creates the objects one after another as kubectl's create and apply do: each
// created one printed with done, the errors of the others printed at the end.
func createEach(ctx context.Context, c *getClients, objects []object, options metav1.CreateOptions, done string) (stdout, stderr string, err error) {
	var out bytes.Buffer
	var errs []error
	for _, o := range objects {
		created, err := c.resourceFor(o.mapping, o.obj.GetNamespace()).Create(ctx, o.obj, options)
		if err != nil {
			errs = append(errs, withSource("creating", err))
			continue
		}
		fmt.Fprintf(&out, "%s %s\n", kindName(o.mapping, created.GetName()), done)
	}
	return out.String(), errorsText(errs), errors.Join(errs...)
}

// object is one object of a YAML stream, with its type's mapping.
type object struct {
	obj     *unstructured.Unstructured
	mapping *meta.RESTMapping
}

// decodeObjects reads a YAML stream as kubectl's resource builder does (numbers as
// integers where they are, a namespaced object without a namespace in namespace), or
// returns errKubectlMustAnswer for what kubectl must read itself: lists, objects of a type
// discovery cannot name, and with enforce (-n given) objects of another namespace.
func decodeObjects(c *getClients, namespace string, enforce bool, stdin string) ([]object, error) {
	var objects []object
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stdin), 4096)
	for {
		var raw json.RawMessage
		if err := decoder.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, errKubectlMustAnswer
		}
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte("{}")) {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, errKubectlMustAnswer
		}
		gvk := obj.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" || strings.HasSuffix(gvk.Kind, "List") {
			return nil, errKubectlMustAnswer
		}
		m, err := c.kindMapping(gvk)
		if err != nil {
			return nil, errKubectlMustAnswer
		}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			switch {
			case obj.GetNamespace() == "":
				obj.SetNamespace(namespace)
			case enforce && obj.GetNamespace() != namespace:
				return nil, errKubectlMustAnswer // kubectl refuses it, in its own words
			}
		}
		objects = append(objects, object{obj, m})
	}
	if len(objects) == 0 {
		return nil, errKubectlMustAnswer
	}
	return objects, nil
}

// withSource words an answer of the server as kubectl's AddSourceToErr does for stdin.
func withSource(verb string, err error) error {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return fmt.Errorf("error when %s %q: %w", verb, "STDIN", err)
	}
	s := status.Status()
	s.Message = fmt.Sprintf("error when %s %q: %s", verb, "STDIN", s.Message)
	return &apierrors.StatusError{ErrStatus: s}
}

// deleteObjects deletes each object in the background, as kubectl's default cascade does,
// printing each one, then waits until every deleted one is gone unless --wait=false.
func deleteObjects(ctx context.Context, c *getClients, namespace string, objects []named, r writeRequest) (stdout, stderr string, err error) {
	var out bytes.Buffer
	var errs []error
	type deleted struct {
		named
		uid types.UID
	}
	// Each object is read first, before anything is deleted: its UID tells the object waited
	// for from one created again under its name, and a type whose mapping is out of date
	// (staleMapping) is left to kubectl while nothing was done yet. A reader who may not
	// get an object still deletes it, and waits for the name.
	read := make([]error, len(objects))
	uids := make([]types.UID, len(objects))
	for i, o := range objects {
		obj, err := readFirst(ctx, c, namespace, o)
		if errors.Is(err, errKubectlMustAnswer) {
			return "", "", err
		}
		if err == nil {
			uids[i] = obj.GetUID()
		}
		read[i] = err
	}
	var gone []deleted
	background := metav1.DeletePropagationBackground
	for i, o := range objects {
		err := read[i]
		if err == nil || apierrors.IsForbidden(err) {
			err = c.resourceFor(o.mapping, namespace).Delete(ctx, o.name, metav1.DeleteOptions{PropagationPolicy: &background})
		}
		switch {
		case apierrors.IsNotFound(err) && r.ignoreMissing:
		case err != nil:
			errs = append(errs, err)
		default:
			fmt.Fprintln(&out, strings.Replace(kindName(o.mapping, o.name), "/", ` "`, 1)+`" deleted`)
			gone = append(gone, deleted{o, uids[i]})
		}
	}
	if r.wait && len(errs) == 0 {
		if r.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, r.timeout)
			defer cancel()
		}
		for _, d := range gone {
			client := c.resourceFor(d.mapping, namespace)
			for {
				obj, err := client.Get(ctx, d.name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) || (err == nil && d.uid != "" && obj.GetUID() != d.uid) ||
					apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) {
					break
				}
				if ctx.Err() != nil {
					err := fmt.Errorf("timed out waiting for the condition on %s", d.mapping.Resource.Resource+"/"+d.name)
					return out.String(), errorLine(err), err
				}
				select {
				case <-ctx.Done():
				case <-time.After(500 * time.Millisecond):
				}
			}
		}
	}
	return out.String(), errorsText(errs), errors.Join(errs...)
}

// waitForCondition waits until each object has the condition with the status, as kubectl
// wait --for=condition= does: a condition that describes an older generation than the
// object's does not count.
func waitForCondition(ctx context.Context, c *getClients, namespace string, objects []named, r writeRequest) (stdout, stderr string, err error) {
	for _, o := range objects {
		_, err := readFirst(ctx, c, namespace, o)
		if errors.Is(err, errKubectlMustAnswer) {
			return "", "", err
		}
		if err != nil {
			return "", errorLine(err), err
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var out bytes.Buffer
	for _, o := range objects {
		client := c.resourceFor(o.mapping, namespace)
		for {
			obj, err := client.Get(waitCtx, o.name, metav1.GetOptions{})
			if err == nil && conditionMet(obj, r.condition, r.status) {
				fmt.Fprintf(&out, "%s condition met\n", kindName(o.mapping, o.name))
				break
			}
			if waitCtx.Err() != nil || apierrors.IsNotFound(err) {
				err := fmt.Errorf("timed out waiting for the condition on %s", o.mapping.Resource.Resource+"/"+o.name)
				return out.String(), errorLine(err), err
			}
			select {
			case <-waitCtx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	return out.String(), "", nil
}

// conditionMet reports whether obj's condition of type condition has status, for the
// object's current generation when the condition or the status says which it describes.
func conditionMet(obj *unstructured.Unstructured, condition, status string) bool {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conditions {
		cond, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		if typ, _, _ := unstructured.NestedString(cond, "type"); !strings.EqualFold(typ, condition) {
			continue
		}
		got, found, _ := unstructured.NestedString(cond, "status")
		if !found {
			continue
		}
		if generation, found, _ := unstructured.NestedInt64(obj.Object, "metadata", "generation"); found {
			observed, found, _ := unstructured.NestedInt64(cond, "observedGeneration")
			if !found {
				observed, found, _ = unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
			}
			if found && observed < generation {
				return false
			}
		}
		return strings.EqualFold(got, status)
	}
	return false
}

// InProcess reports whether k answers args in this process rather than running kubectl
// (for a type discovery can name), so that the tests comparing the two can tell they do.
func (k Kubectl) InProcess(args ...string) bool {
	if k.Binary != "" || k.AlwaysRun {
		return false
	}
	_, get := parseGet(args)
	_, write := parseWrite(args)
	_, exec := parseExec(args)
	return get || write || exec
}

// writeWithin answers args in process within limit when it can.
func (k Kubectl) writeWithin(limit time.Duration, stdin string, args []string) (stdout, stderr string, err error) {
	r, ok := parseWrite(args)
	if !ok || k.Binary != "" || k.AlwaysRun {
		return "", "", errKubectlMustAnswer
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	w := &warnings{seen: map[string]bool{}}
	stdout, stderr, err = writeInProcess(context.WithValue(ctx, warningsKey{}, w), k.Kubeconfig, r, stdin)
	if errors.Is(err, errKubectlMustAnswer) {
		return "", "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return stdout, w.text.String() + stderr, err
}
