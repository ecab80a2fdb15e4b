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

// Command bench measures the nginx-operator API against the same API served as a CRD,
// side by side on a private local control plane, and writes docs/benchmarks.{md,json,svg}.
// `make bench` runs it; `go run ./test/bench -h` lists the knobs for a shorter run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/example/nginx-operator/test/framework"
)

type options struct {
	out, repo, crdFile, profileDir, command string
	sizes                                   []int
	rounds, clients                         int
	gets, lists, updates, watchUpdates      int
	watchers, fanoutWrites                  int
	pageLimit                               int64
	cbor, convergence, scenarios            bool
	revisionsN, revisionsEach               int
	convergenceN, smallSize                 int
	convergencePerNamespace                 int
	steadyState                             time.Duration
}

func parseFlags() (*options, error) {
	o := &options{}
	sizes := flag.String("sizes", "1000,10000,50000", "object counts per target, measured cumulatively (create up to each, measure)")
	flag.StringVar(&o.out, "out", "docs", "directory for benchmarks.md, benchmarks.json and benchmarks.svg")
	flag.StringVar(&o.repo, "repo", ".", "repository root (bin/ and hack/ are used from there)")
	flag.StringVar(&o.crdFile, "crd", "artifacts/bench/crd-nginxoperators.yaml", "the v1alpha2 schema as a CRD in another group, relative to -repo")
	flag.StringVar(&o.profileDir, "profile", "", "write CPU profiles of our apiserver during the create, list and update phases of the largest size, and its live heap there, to this directory")
	flag.StringVar(&o.command, "command", "", "the command to print in the report (default: this program's command line)")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds per operation; targets are interleaved round by round")
	flag.IntVar(&o.clients, "clients", 16, "concurrent keep-alive clients for create, get, update and delete")
	flag.IntVar(&o.gets, "gets", 300, "gets per round")
	flag.IntVar(&o.lists, "lists", 4, "whole-collection lists per round (fewer above 10000 objects: as many objects listed per round as at 10000, at least one list)")
	flag.IntVar(&o.updates, "updates", 200, "updates per round")
	flag.IntVar(&o.watchUpdates, "watch-updates", 250, "writes timed to their watch event per round")
	flag.Int64Var(&o.pageLimit, "page-limit", 500, "page size of the paginated list")
	flag.IntVar(&o.watchers, "watchers", 1000, "concurrent watchers of the many-watchers scenario (JSON for the CRD, protobuf for ours); 0 skips it")
	flag.IntVar(&o.fanoutWrites, "fanout-writes", 20, "writes per round that every one of -watchers must see")
	flag.BoolVar(&o.cbor, "cbor", true, "start both servers with --feature-gates=CBORServingAndStorage=true and measure CBOR")
	flag.IntVar(&o.smallSize, "small-objects", 10000, "after the sizes, measure every operation again at this size with small objects (image, replicas, one port); 0 skips it")
	flag.BoolVar(&o.convergence, "convergence", true, "measure controller convergence after the API scenarios")
	flag.IntVar(&o.convergenceN, "convergence-n", 1000, "NginxOperators the convergence run creates")
	flag.IntVar(&o.convergencePerNamespace, "convergence-per-namespace", 100, "NginxOperators per namespace in the convergence run")
	flag.BoolVar(&o.scenarios, "scenarios", true, "measure the API scenarios (false: only the convergence run)")
	flag.IntVar(&o.revisionsN, "revisions", 10000, "NginxOperators of the revisions run, each written until it has -revisions-each revisions; 0 skips it")
	flag.IntVar(&o.revisionsEach, "revisions-each", 10, "revisions per NginxOperator in the revisions run (at most 11, all kept under the default limit)")
	flag.DurationVar(&o.steadyState, "steady-state", 60*time.Second, "how long the convergence run counts writes after convergence")
	flag.Parse()
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 || (len(o.sizes) > 0 && n <= o.sizes[len(o.sizes)-1]) {
			return nil, fmt.Errorf("-sizes wants increasing positive counts, got %q", *sizes)
		}
		o.sizes = append(o.sizes, n)
	}
	if o.rounds < 1 || o.clients < 1 || o.gets < 1 || o.lists < 1 || o.updates < 1 || o.watchUpdates < 1 || o.pageLimit < 1 {
		return nil, errors.New("-rounds, -clients, -gets, -lists, -updates, -watch-updates and -page-limit must be positive")
	}
	if o.revisionsN < 0 || o.revisionsEach < 2 || o.revisionsEach > 11 {
		return nil, errors.New("-revisions must not be negative and -revisions-each must be 2 to 11")
	}
	if o.convergenceN < 1 || o.convergencePerNamespace < 1 {
		return nil, errors.New("-convergence-n and -convergence-per-namespace must be positive")
	}
	if o.command == "" {
		o.command = strings.Join(os.Args, " ")
	}
	return o, nil
}

func main() {
	// The CRD client's unstructured serializer offers CBOR only with client-go's gate on;
	// it is read once, on first use, so it is set before any client exists.
	_ = os.Setenv("KUBE_FEATURE_ClientsAllowCBOR", "true") // fails only for an invalid name
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, o *options) error {
	started := time.Now()
	logf := func(format string, args ...any) {
		fmt.Printf("[%6s] %s\n", time.Since(started).Round(time.Second), fmt.Sprintf(format, args...))
	}
	root, err := filepath.Abs(o.repo)
	if err != nil {
		return err
	}
	result := &Result{
		Command: o.command, Started: started.UTC(), Machine: describeMachine(), Versions: map[string]string{},
		Settings: Settings{Sizes: o.sizes, Rounds: o.rounds, Clients: o.clients, GetsPerRound: o.gets,
			ListsPerRound: o.lists, UpdatesPerRnd: o.updates, WatchPerRound: o.watchUpdates, PageLimit: o.pageLimit,
			Watchers: o.watchers, FanoutWrites: o.fanoutWrites, CBOR: o.cbor, CRDFile: o.crdFile,
			Scenarios: o.scenarios},
	}
	result.Versions["go (benchmark client)"] = result.Machine.GoVersion
	if o.scenarios {
		if err := runAPIScenarios(ctx, o, root, result, logf); err != nil {
			return err
		}
	}
	if o.revisionsN > 0 {
		run, err := runRevisions(ctx, o, root, result.Versions, logf)
		if err != nil {
			return err
		}
		result.Revisions = run
	}
	if o.convergence {
		rate := 0.0
		if o.scenarios {
			rate = bestRate(result, opCreate, o.sizes[len(o.sizes)-1], "aggregated")
		}
		run, err := convergenceRun(ctx, o, root, rate, result.Versions, logf)
		if err != nil {
			return err
		}
		result.Convergence = []*ConvergenceRun{run}
	}
	result, err = keepPrevious(filepath.Join(o.out, "benchmarks.json"), result, logf)
	if err != nil {
		return err
	}
	result.Goals = evaluateGoals(result)
	// The header's run is the API scenarios'; a run without them keeps its duration (the
	// convergence and revisions sections carry their own).
	if o.scenarios {
		result.Duration = time.Since(started).Round(time.Second).String()
	}
	if err := writeReport(o.out, result); err != nil {
		return err
	}
	logf("wrote %s/benchmarks.md, benchmarks.json and benchmarks.svg", o.out)
	return nil
}

// convergenceRun measures controller convergence on stacks of its own. Only an
// interrupt is an error: a failed run is reported in its section.
func convergenceRun(ctx context.Context, o *options, root string, createRate float64, versions map[string]string, logf func(string, ...any)) (*ConvergenceRun, error) {
	run := &ConvergenceRun{N: o.convergenceN, PerNamespace: o.convergencePerNamespace, Command: o.command, Started: time.Now().UTC()}
	logf("controller convergence: %d NginxOperators, %d per namespace", o.convergenceN, o.convergencePerNamespace)
	res, err := RunConvergence(ctx, ConvergenceConfig{RepoRoot: root, N: o.convergenceN, PerNamespace: o.convergencePerNamespace,
		SteadyState: o.steadyState, CreateRate: createRate, Logf: logf,
		Stack: func(purpose string) (string, func(), error) {
			stack, stop, err := startStack(root, stackSettings(false), purpose, versions, logf)
			if err != nil {
				return "", nil, err
			}
			return stack.LocalDir, stop, nil
		}})
	run.Duration = time.Since(run.Started).Round(time.Second).String()
	run.Result = res
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		run.Error = err.Error()
		logf("convergence failed: %v", err)
	}
	return run, nil
}

// stackSettings are the variables of a private benchmark stack: no controller, and our
// apiserver keeping its objects in the stack's etcd process under its own prefix, as
// kube-apiserver does, so that its heap holds no embedded etcd and the heap per object
// compares like with like. With cbor both servers serve CBOR.
func stackSettings(cbor bool) []string {
	extra := []string{"START_CONTROLLER=false", "OPERATOR_APISERVER_STORAGE=external"}
	if cbor {
		gate := "--feature-gates=CBORServingAndStorage=true"
		extra = append(extra, "KUBE_APISERVER_EXTRA_FLAGS="+gate, "OPERATOR_APISERVER_EXTRA_FLAGS="+gate)
	}
	return extra
}

// startStack starts a private local control plane for purpose and returns its LOCAL_DIR
// and the function that stops it by PID (safe to call more than once). The servers'
// versions are added to versions.
func startStack(root string, extra []string, purpose string, serverVersions map[string]string, logf func(string, ...any)) (*framework.Stack, func(), error) {
	stack, err := framework.NewStack(root, "nginx-operator-bench-", extra...)
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			logf("stopping the local control plane of %s", purpose)
			if out, err := stack.Down(2 * time.Minute); err != nil {
				fmt.Fprintln(os.Stderr, out, err)
			}
		})
	}
	logf("starting a private local control plane for %s in %s", purpose, stack.LocalDir)
	if err := stack.Up(3, 10*time.Minute); err != nil {
		stack.DumpLogs(20)
		stop()
		return nil, nil, err
	}
	logf("local control plane up")
	if err := stopController(stack.LocalDir, logf); err != nil {
		stop()
		return nil, nil, err
	}
	maps.Copy(serverVersions, versions(context.Background(), stack.LocalDir, stack.Ports))
	return stack, stop, nil
}

// runAPIScenarios measures every operation on both APIs on a stack of its own, stopped
// before it returns so that the convergence run has the machine to itself.
func runAPIScenarios(ctx context.Context, o *options, root string, result *Result, logf func(string, ...any)) error {
	crd, err := readCRD(filepath.Join(root, o.crdFile))
	if err != nil {
		return err
	}
	stack, stop, err := startStack(root, stackSettings(o.cbor), "the API scenarios", result.Versions, logf)
	if err != nil {
		return err
	}
	defer stop()
	localDir, ports := stack.LocalDir, stack.Ports
	kubeHost := fmt.Sprintf("https://127.0.0.1:%d", ports["KUBE_APISERVER_PORT"])
	operatorHost := fmt.Sprintf("https://127.0.0.1:%d", ports["OPERATOR_APISERVER_PORT"])
	kubeAdmin := adminConfig(localDir, kubeHost, "ca.crt")
	operatorAdmin := adminConfig(localDir, operatorHost, "nginx-operator-ca.crt")
	if err := crd.install(ctx, kubeAdmin); err != nil {
		return err
	}
	targets := newTargets(localDir, ports["KUBE_APISERVER_PORT"], ports["OPERATOR_APISERVER_PORT"], crd.gvr, crd.kind)
	if err := createNamespaces(ctx, kubeAdmin, targets); err != nil {
		return err
	}
	if err := issueBenchIdentity(localDir); err != nil {
		return err
	}
	if err := grantBenchIdentity(ctx, kubeAdmin, targets); err != nil {
		return err
	}

	b := &Bench{cfg: result.Settings, targets: targets, logf: logf, stored: map[string]int{}, accs: map[string]*acc{}}
	if b.clients, result.Targets, err = connect(ctx, localDir, targets, o, logf); err != nil {
		return err
	}
	// The same three targets in namespaces of their own, for the small-object pass.
	var small *Bench
	if o.smallSize > 0 {
		smallTargets := withSmallObjects(targets)
		if err := createNamespaces(ctx, kubeAdmin, smallTargets); err != nil {
			return err
		}
		small = &Bench{cfg: result.Settings, targets: smallTargets, logf: logf, stored: map[string]int{}, accs: map[string]*acc{}}
		if small.clients, _, err = connect(ctx, localDir, smallTargets, o, logf); err != nil {
			return err
		}
	}

	heapOf := map[string]heapSource{}
	for name, cfg := range map[string]*rest.Config{kubeAPIServer: kubeAdmin, operatorAPIServer: operatorAdmin} {
		client, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return err
		}
		heapOf[name] = heapSource{url: cfg.Host, client: client}
	}
	if b.resources, err = newResources(localDir, heapOf); err != nil {
		return err
	}
	var profiler *Profiler
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
		profiler = &Profiler{dir: o.profileDir, source: heapOf[operatorAPIServer], kube: heapOf[kubeAPIServer], chunk: 5, logf: logf}
	}

	if err := b.runScenarios(ctx, result, profiler); err != nil {
		return err
	}
	result.Ops = b.results(map[string]bool{opCreate: true, opDelete: true, opPaginate: true})
	result.AuthzReviews = b.reviews
	if small != nil {
		small.resources = b.resources
		if err := small.runSmall(ctx, o.smallSize); err != nil {
			return err
		}
		result.SmallObjects = &SmallObjects{Size: o.smallSize, Ops: small.results(map[string]bool{opCreate: true, opDelete: true, opPaginate: true})}
	}
	return nil
}

// connect makes a client for every target and format and probes it; formats a target
// does not serve are recorded, not measured.
func connect(ctx context.Context, localDir string, targets []*Target, o *options, logf func(string, ...any)) (map[string][]*Client, []TargetInfo, error) {
	clients := map[string][]*Client{}
	var infos []TargetInfo
	for _, t := range targets {
		info := TargetInfo{Name: t.Name, Title: t.Title, Path: fmt.Sprintf("%s/apis/%s/namespaces/%s/%s", t.Host, t.GV, t.Namespace, t.Resource), Formats: map[string]string{}}
		for _, f := range allFormats {
			if f.Name == "cbor" && !o.cbor {
				continue
			}
			c, err := newClient(localDir, t, f, o.clients)
			if err != nil {
				return nil, nil, err
			}
			if err := c.probe(ctx); err != nil {
				return nil, nil, err
			}
			if c.NotServed != "" {
				info.Formats[f.Name] = "not served: " + c.NotServed
				logf("%-28s not served: %s", c.Key(), c.NotServed)
				continue
			}
			info.Formats[f.Name] = "served"
			clients[t.Name] = append(clients[t.Name], c)
			logf("%-28s served", c.Key())
		}
		infos = append(infos, info)
	}
	return clients, infos, nil
}

// runSmall measures every operation once more, at one size, with small objects.
func (b *Bench) runSmall(ctx context.Context, size int) error {
	b.logf("small objects: growing every target to %d", size)
	for _, phase := range []func(context.Context, int) error{b.grow, b.gets, b.lists, b.plainLists, b.paginate, b.updates, b.watches} {
		if err := phase(ctx, size); err != nil {
			return err
		}
	}
	b.logf("small objects: deleting everything")
	return b.shrink(ctx, size)
}

// runScenarios grows every target to each size in turn and measures every operation
// there, then deletes everything.
func (b *Bench) runScenarios(ctx context.Context, result *Result, profiler *Profiler) error {
	baseline, err := b.resources.Heap(ctx)
	if err != nil {
		return err
	}
	largest := b.cfg.Sizes[len(b.cfg.Sizes)-1]
	profile := func(size int, phase string, fn func() error) error {
		if profiler == nil || size != largest {
			return fn()
		}
		stop := profiler.Start(ctx, phase)
		err := fn()
		summary, perr := stop()
		if perr != nil {
			return errors.Join(err, fmt.Errorf("profiling %s: %w", phase, perr))
		}
		result.Profiles = append(result.Profiles, *summary)
		return err
	}
	for _, size := range b.cfg.Sizes {
		b.logf("growing every target to %d objects", size)
		if err := profile(size, "create", func() error { return b.grow(ctx, size) }); err != nil {
			return err
		}
		heap, err := b.resources.Heap(ctx)
		if err != nil {
			return err
		}
		rss, err := b.resources.RSS()
		if err != nil {
			return err
		}
		result.Memory = append(result.Memory, b.memoryPoints(size, baseline, heap, rss)...)
		db, err := b.resources.EtcdDBBytes()
		if err != nil {
			return err
		}
		result.Etcd = append(result.Etcd, EtcdPoint{Size: size, FileBytes: db})
		if profiler != nil && size == largest {
			summary, parts, err := profiler.SaveHeap(ctx, fmt.Sprintf("%d", size), b.storedBy())
			if err != nil {
				return err
			}
			result.Profiles = append(result.Profiles, *summary)
			result.HeapBreakdown = parts
		}
		if err := profile(size, "get", func() error { return b.gets(ctx, size) }); err != nil {
			return err
		}
		if err := profile(size, "list", func() error { return b.lists(ctx, size) }); err != nil {
			return err
		}
		if err := profile(size, "list-no-gzip", func() error { return b.plainLists(ctx, size) }); err != nil {
			return err
		}
		if err := b.paginate(ctx, size); err != nil {
			return err
		}
		if err := profile(size, "update", func() error { return b.updates(ctx, size) }); err != nil {
			return err
		}
		if err := b.watches(ctx, size); err != nil {
			return err
		}
		if b.cfg.Watchers > 0 {
			if err := b.fanout(ctx, size); err != nil {
				return err
			}
		}
		if size == largest {
			if result.StreamMemory, err = b.streamMemory(ctx, size); err != nil {
				return err
			}
		}
	}
	b.logf("deleting everything")
	return b.shrink(ctx, largest)
}

// storedBy is how many benchmark objects each server keeps.
func (b *Bench) storedBy() map[string]int {
	objects := map[string]int{}
	for _, t := range b.targets {
		objects[t.Stores] += b.stored[t.Name]
	}
	return objects
}

// memoryPoints relates each server's heap growth to the objects it stores: the CRD's
// objects live in kube-apiserver, the aggregated and direct targets' in our apiserver.
func (b *Bench) memoryPoints(size int, baseline, heap, rss map[string]float64) []MemoryPoint {
	objects := b.storedBy()
	var out []MemoryPoint
	for _, server := range []string{kubeAPIServer, operatorAPIServer} {
		p := MemoryPoint{Size: size, Server: server, Objects: objects[server], HeapBytes: heap[server], BaselineBytes: baseline[server], RSSBytes: rss[server]}
		if p.Objects > 0 {
			p.PerObject = (p.HeapBytes - p.BaselineBytes) / float64(p.Objects)
		}
		b.logf("  heap of %-25s %7.1f MiB (baseline %.1f MiB) with %d objects: %.0f bytes/object", server, p.HeapBytes/(1<<20), p.BaselineBytes/(1<<20), p.Objects, p.PerObject)
		out = append(out, p)
	}
	return out
}
