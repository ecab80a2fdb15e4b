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
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// A test reads the cluster's state with `kubectl get` thousands of times per make test,
// mostly while it waits for a condition. getRequest answers the common forms in the test's
// own process with client-go, printing what kubectl prints: `get TYPE [NAME...]` or
// `get TYPE/NAME...` with -n, -A, -l, --field-selector, --ignore-not-found, --as and
// --as-group, as -o json, yaml, name or jsonpath; and `get --raw PATH`. Anything else
// (tables, watches, other flags) runs kubectl itself, as does a request whose resource
// type discovery cannot name yet, so that kubectl's own answer stands where it differs.
type getRequest struct {
	namespace     string
	allNamespaces bool
	selector      string
	fieldSelector string
	output        string // json, yaml, name or jsonpath=TEMPLATE
	ignoreMissing bool
	raw           string
	as            string
	asGroups      []string
	resources     []string // TYPE, then NAMEs; or TYPE/NAME each
}

// valueFlag is a kubectl flag that takes a value, under its names ("-n", "--namespace"):
// the value goes to into, or is appended to list for a flag given more than once.
type valueFlag struct {
	names []string
	into  *string
	list  *[]string
}

// scanArgs reads kubectl's arguments as its flag parser does for the flags it is given:
// a flag alone that boolFlag accepts (its whole text), or one of values as "--name=v",
// "--name v", "-xv" or "-x=v" ("-" alone is an argument, stdin). It returns the other
// arguments in order, or false at a flag it does not know, which kubectl must then read.
func scanArgs(args []string, boolFlag func(string) bool, values []valueFlag) ([]string, bool) {
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			positional = append(positional, arg)
			continue
		}
		if boolFlag(arg) {
			continue
		}
		found := false
		for _, f := range values {
			for _, name := range f.names {
				v, ok := strings.CutPrefix(arg, name+"=")
				switch {
				case ok:
				case arg == name && i+1 < len(args):
					i++
					v, ok = args[i], true
				case len(name) == 2 && strings.HasPrefix(arg, name) && len(arg) > 2:
					v, ok = arg[2:], true
				}
				if ok && !found {
					found = true
					if f.list != nil {
						*f.list = append(*f.list, v)
					} else {
						*f.into = v
					}
				}
			}
		}
		if !found {
			return nil, false
		}
	}
	return positional, true
}

// parseGet returns the request args make, or false when kubectl itself must answer them.
func parseGet(args []string) (getRequest, bool) {
	var r getRequest
	positional, ok := scanArgs(args, func(arg string) bool {
		switch arg {
		case "-A", "--all-namespaces", "--all-namespaces=true":
			r.allNamespaces = true
		case "--ignore-not-found", "--ignore-not-found=true":
			r.ignoreMissing = true
		default:
			return false
		}
		return true
	}, []valueFlag{
		{names: []string{"-n", "--namespace"}, into: &r.namespace},
		{names: []string{"-o", "--output"}, into: &r.output},
		{names: []string{"-l", "--selector"}, into: &r.selector},
		{names: []string{"--field-selector"}, into: &r.fieldSelector},
		{names: []string{"--raw"}, into: &r.raw},
		{names: []string{"--as"}, into: &r.as},
		{names: []string{"--as-group"}, list: &r.asGroups},
	})
	if !ok {
		return r, false
	}
	if len(positional) == 0 || positional[0] != "get" {
		return r, false
	}
	r.resources = positional[1:]
	if r.raw != "" {
		return r, len(r.resources) == 0 && r.namespace == "" && r.selector == "" && r.output == ""
	}
	switch {
	case r.output == "json", r.output == "yaml", r.output == "name":
	case strings.HasPrefix(r.output, "jsonpath="):
		// kubectl refuses a template it cannot parse before it asks the server.
		if jsonpath.New("").Parse(strings.TrimPrefix(r.output, "jsonpath=")) != nil {
			return r, false
		}
	default:
		return r, false
	}
	if len(r.resources) == 0 || strings.Contains(r.resources[0], ",") {
		return r, false
	}
	slashes := 0
	for _, res := range r.resources {
		if strings.Contains(res, "/") {
			slashes++
		}
	}
	if slashes != 0 && slashes != len(r.resources) {
		return r, false
	}
	named := slashes > 0 || len(r.resources) > 1
	// kubectl refuses a name with -A or a selector; let it say so.
	return r, !(named && (r.allNamespaces || r.selector != "" || r.fieldSelector != ""))
}

// getClients holds a kubeconfig's clients for one identity, with discovery cached, so that
// a test's reads do not discover the API each time (kubectl keeps its own cache on disk).
type getClients struct {
	namespace string
	config    *rest.Config // kubectl's own client limits and impersonation
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	expander  meta.RESTMapper

	mu       sync.Mutex
	mappings map[string]*meta.RESTMapping // by the type as written
}

var (
	getClientsMu    sync.Mutex
	getClientsCache = map[string]*getClients{}
)

func clientsFor(kubeconfig, as string, groups []string) (*getClients, error) {
	info, err := os.Stat(kubeconfig)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s\x00%d\x00%s\x00%s", kubeconfig, info.ModTime().UnixNano(), as, strings.Join(groups, "\x00"))
	getClientsMu.Lock()
	defer getClientsMu.Unlock()
	if c := getClientsCache[key]; c != nil {
		return c, nil
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{})
	config, err := loader.ClientConfig()
	if err != nil {
		return nil, err
	}
	namespace, _, err := loader.Namespace()
	if err != nil {
		return nil, err
	}
	config = rest.CopyConfig(config)
	// kubectl's own limits: a test polling several objects is not throttled on its side.
	config.QPS, config.Burst = 50, 300
	config.Impersonate.UserName, config.Impersonate.Groups = as, groups
	config.WarningHandler, config.WarningHandlerWithContext = nil, requestWarnings{}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(disco)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	c := &getClients{
		namespace: namespace, config: config, dynamic: dyn, discovery: disco,
		mapper: mapper, expander: restmapper.NewShortcutExpander(mapper, cached, nil),
		mappings: map[string]*meta.RESTMapping{},
	}
	getClientsCache[key] = c
	return c, nil
}

// mapping resolves a type as kubectl's resource builder does: a fully specified
// resource.version.group first, then resource[.group], through short names. A type
// found once is kept, as kubectl's discovery cache keeps it while a group is unavailable.
func (c *getClients) mapping(typ string) (*meta.RESTMapping, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.mappings[typ]; m != nil {
		return m, nil
	}
	var m *meta.RESTMapping
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if m, err = c.lookup(typ); err == nil {
			c.mappings[typ] = m
			return m, nil
		}
		c.mapper.Reset() // a type added since discovery last ran (a CRD, an APIService)
	}
	return nil, err
}

// forget drops what typ was mapped to and what discovery found: the API changed under
// it (staleMapping).
func (c *getClients) forget(typ string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mappings, typ)
	c.mapper.Reset()
}

// staleMapping reports whether err says the resource a request went to is not served at
// all, rather than that an object is missing: the mapping of its type is out of date, as
// when a CRD that shared our plural was deleted since. kubectl, which must rediscover,
// answers such a request instead.
func staleMapping(err error) bool {
	return apierrors.IsNotFound(err) && strings.HasPrefix(err.Error(), "the server could not find the requested resource")
}

func (c *getClients) lookup(typ string) (*meta.RESTMapping, error) {
	full, groupResource := schema.ParseResourceArg(typ)
	var gvk schema.GroupVersionKind
	if full != nil {
		gvk, _ = c.expander.KindFor(*full)
	}
	if gvk.Empty() {
		var err error
		if gvk, err = c.expander.KindFor(groupResource.WithVersion("")); err != nil {
			return nil, err
		}
	}
	return c.expander.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// requestWarnings hands the server's warnings to the request they came with, which prints
// them as kubectl does: "Warning: TEXT", each once.
type requestWarnings struct{}

type warningsKey struct{}

type warnings struct {
	mu   sync.Mutex
	seen map[string]bool
	text strings.Builder
}

func (requestWarnings) HandleWarningHeaderWithContext(ctx context.Context, code int, _, text string) {
	w, ok := ctx.Value(warningsKey{}).(*warnings)
	if code != 299 || text == "" || !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.seen[text] {
		w.seen[text] = true
		fmt.Fprintf(&w.text, "Warning: %s\n", text)
	}
}

// errKubectlMustAnswer means the request is one kubectl itself must answer.
var errKubectlMustAnswer = errors.New("kubectl must answer this request")

// getInProcess answers r as kubectl would, returning its standard output and error and a
// non-nil error when kubectl would exit non-zero, or errKubectlMustAnswer.
func getInProcess(ctx context.Context, kubeconfig string, r getRequest) (stdout, stderr string, err error) {
	c, err := clientsFor(kubeconfig, r.as, r.asGroups)
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	if r.raw != "" {
		body, err := c.discovery.RESTClient().Get().RequestURI(r.raw).DoRaw(ctx)
		if err != nil {
			return "", errorLine(err), err
		}
		return string(body), "", nil
	}
	namespace := r.namespace
	if namespace == "" {
		namespace = c.namespace
	}
	// The objects asked for, by type: TYPE NAME..., TYPE/NAME..., or a whole TYPE.
	type target struct{ typ, name string }
	var targets []target
	switch {
	case strings.Contains(r.resources[0], "/"):
		for _, res := range r.resources {
			typ, name, _ := strings.Cut(res, "/")
			targets = append(targets, target{typ, name})
		}
	case len(r.resources) > 1:
		for _, name := range r.resources[1:] {
			targets = append(targets, target{r.resources[0], name})
		}
	}
	if targets == nil {
		targets = []target{{typ: r.resources[0]}} // the whole type
	}
	mappings := map[string]*meta.RESTMapping{}
	for _, t := range targets {
		if mappings[t.typ] == nil {
			m, err := c.mapping(t.typ)
			if err != nil {
				return "", "", errKubectlMustAnswer
			}
			mappings[t.typ] = m
		}
	}
	resource := func(m *meta.RESTMapping) dynamic.ResourceInterface {
		if r.allNamespaces {
			return c.dynamic.Resource(m.Resource)
		}
		return c.resourceFor(m, namespace)
	}

	// As kubectl's printGeneric: an object named alone is printed, or its error is all; else
	// what was found is printed as a List, then every error.
	var items []unstructured.Unstructured
	var errs []error
	if targets[0].name == "" {
		list, err := resource(mappings[targets[0].typ]).List(ctx, metav1.ListOptions{LabelSelector: r.selector, FieldSelector: r.fieldSelector})
		switch {
		case staleMapping(err):
			c.forget(targets[0].typ)
			return "", "", errKubectlMustAnswer
		case err != nil:
			errs = append(errs, err)
		default:
			items = list.Items
		}
	} else {
		for _, t := range targets {
			obj, err := resource(mappings[t.typ]).Get(ctx, t.name, metav1.GetOptions{})
			switch {
			case staleMapping(err):
				c.forget(t.typ)
				return "", "", errKubectlMustAnswer
			case err == nil:
				items = append(items, *obj)
			case apierrors.IsNotFound(err) && r.ignoreMissing:
			default:
				errs = append(errs, err)
			}
		}
	}
	single := len(targets) == 1 && targets[0].name != ""
	if single && len(errs) > 0 {
		return "", errorLine(errs[0]), errs[0]
	}
	if len(items) == 0 && r.ignoreMissing {
		return "", errorsText(errs), errors.Join(errs...)
	}
	var out bytes.Buffer
	if err := printObjects(&out, r.output, items, single); err != nil {
		errs = append(errs, err)
	}
	return out.String(), errorsText(errs), errors.Join(errs...)
}

// printObjects prints as kubectl's printers do: one object alone when one was named, else
// a List of them.
func printObjects(out *bytes.Buffer, output string, items []unstructured.Unstructured, single bool) error {
	if output == "name" {
		for _, item := range items {
			gk := item.GroupVersionKind().GroupKind()
			fmt.Fprintf(out, "%s/%s\n", strings.ToLower(gk.String()), item.GetName())
		}
		return nil
	}
	if output == "json" || output == "yaml" { // kubectl leaves them out without --show-managed-fields
		for i := range items {
			items[i].SetManagedFields(nil)
		}
	}
	var content map[string]any
	if single {
		content = items[0].UnstructuredContent()
	} else {
		list := make([]any, 0, len(items))
		for _, item := range items {
			list = append(list, item.UnstructuredContent())
		}
		content = map[string]any{"apiVersion": "v1", "kind": "List", "items": list, "metadata": map[string]any{"resourceVersion": ""}}
	}
	switch output {
	case "json":
		data, err := json.MarshalIndent(content, "", "    ")
		if err != nil {
			return err
		}
		out.Write(append(data, '\n'))
	case "yaml":
		data, err := yaml.Marshal(content)
		if err != nil {
			return err
		}
		out.Write(data)
	default:
		template := strings.TrimPrefix(output, "jsonpath=")
		j := jsonpath.New("out").AllowMissingKeys(true)
		if err := j.Parse(template); err != nil {
			return fmt.Errorf("error parsing jsonpath %s, %w", template, err)
		}
		if err := j.Execute(out, content); err != nil {
			var debug strings.Builder
			fmt.Fprintf(&debug, "Error executing template: %v. Printing more information for debugging the template:\n", err)
			fmt.Fprintf(&debug, "\ttemplate was:\n\t\t%v\n", template)
			fmt.Fprintf(&debug, "\tobject given to jsonpath engine was:\n\t\t%#v\n\n", content)
			return fmt.Errorf("error executing jsonpath %q: %v\n", template, debug.String())
		}
	}
	return nil
}

// errorLine is kubectl's line for an error alone (its CheckErr): "Error from server
// (Reason): message" for an answer of the server, "error: ..." otherwise.
func errorLine(err error) string {
	msg, ok := invalidMessage(err)
	if !ok {
		msg, ok = serverMessage(err)
	}
	if !ok {
		if msg = err.Error(); !strings.HasPrefix(msg, "error: ") {
			msg = "error: " + msg
		}
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	return msg
}

// invalidMessage words an Invalid answer alone as kubectl's CheckErr does: the object and
// each distinct cause ("The NginxOperator "web" is invalid: spec.replicas: ...").
func invalidMessage(err error) (string, bool) {
	statusErr, ok := err.(*apierrors.StatusError)
	if !ok || statusErr.ErrStatus.Reason != metav1.StatusReasonInvalid {
		return "", false
	}
	status := statusErr.ErrStatus
	msg := "The request is invalid"
	details := status.Details
	if details == nil {
		if status.Message != "" {
			msg += ": " + status.Message
		}
		return msg, true
	}
	if details.Kind != "" || details.Name != "" {
		msg = fmt.Sprintf("The %s %q is invalid", details.Kind, details.Name)
	} else if status.Message != "" && len(details.Causes) == 0 {
		msg += ": " + status.Message
	}
	var causes []string
	for _, c := range details.Causes {
		if cause := fmt.Sprintf("%s: %s", c.Field, c.Message); !slices.Contains(causes, cause) {
			causes = append(causes, cause)
		}
	}
	switch len(causes) {
	case 0:
		return msg, true
	case 1:
		return msg + ": " + causes[0] + "\n", true
	}
	var b strings.Builder
	b.WriteString(msg + ": \n")
	for _, cause := range causes {
		b.WriteString("* " + cause + "\n")
	}
	return b.String(), true
}

// serverMessage words an answer of the server as kubectl's StandardErrorMessage does.
func serverMessage(err error) (string, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return "", false
	}
	switch s := status.Status(); {
	case s.Reason == metav1.StatusReasonUnauthorized:
		return fmt.Sprintf("error: You must be logged in to the server (%s)", s.Message), true
	case s.Reason != "":
		return fmt.Sprintf("Error from server (%s): %s", s.Reason, err.Error()), true
	default:
		return fmt.Sprintf("Error from server: %s", err.Error()), true
	}
}

// errorsText is what kubectl prints for the errors of a get: one alone as errorLine words
// it, several one per line (its MultipleErrors).
func errorsText(errs []error) string {
	switch len(errs) {
	case 0:
		return ""
	case 1:
		return errorLine(errs[0])
	}
	var text strings.Builder
	for _, err := range errs {
		msg, ok := serverMessage(err)
		if !ok {
			msg = err.Error()
		}
		text.WriteString(msg + "\n")
	}
	return text.String()
}

// getWithin answers args in process within limit when it can.
func (k Kubectl) getWithin(limit time.Duration, args []string) (stdout, stderr string, err error) {
	r, ok := parseGet(args)
	if !ok || k.Binary != "" || k.AlwaysRun {
		return "", "", errKubectlMustAnswer
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	w := &warnings{seen: map[string]bool{}}
	stdout, stderr, err = getInProcess(context.WithValue(ctx, warningsKey{}, w), k.Kubeconfig, r)
	if errors.Is(err, errKubectlMustAnswer) {
		return "", "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return stdout, w.text.String() + stderr, err
}
