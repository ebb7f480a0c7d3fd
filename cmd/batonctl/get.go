package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// environment is what batonctl's commands take from the process: the clock
// the ages are measured with (a fixed one in tests).
type environment struct {
	now func() time.Time
}

// defaultNamespace is where the site operator keeps its objects when neither
// -n nor the context names a namespace.
const defaultNamespace = "baton-system"

// kubeFlags reach sites the way kubectl does: a kubeconfig and its contexts.
type kubeFlags struct {
	kubeconfig string
	context    string
	namespace  string
	timeout    time.Duration
}

func (k *kubeFlags) register(cmd *cobra.Command, withContext bool) {
	cmd.Flags().StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig file; empty follows kubectl ($KUBECONFIG, then ~/.kube/config)")
	if withContext {
		cmd.Flags().StringVar(&k.context, "context", "", "kubeconfig context of the site; empty is the current context")
	}
	cmd.Flags().StringVarP(&k.namespace, "namespace", "n", "", "namespace of the site's objects; empty is the context's, else "+defaultNamespace)
	cmd.Flags().DurationVar(&k.timeout, "request-timeout", 10*time.Second, "how long one site may take to answer")
}

func (k kubeFlags) loader(contextName string) clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: contextName})
}

// siteClient is one context's client and the namespace of its site's objects.
type siteClient struct {
	context   string
	namespace string
	client    client.Client
}

// open builds the client of one context ("" for the current one).
func (k kubeFlags) open(contextName string) (siteClient, error) {
	loader := k.loader(contextName)
	config, err := loader.ClientConfig()
	if err != nil {
		return siteClient{}, fmt.Errorf("kubeconfig context %q: %w", contextName, err)
	}
	config.Timeout = k.timeout
	namespace := k.namespace
	if namespace == "" {
		namespace = contextNamespace(loader, contextName)
	}
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		return siteClient{}, err
	}
	c, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		return siteClient{}, fmt.Errorf("kubeconfig context %q: %w", contextName, err)
	}
	if contextName == "" {
		raw, _ := loader.RawConfig()
		contextName = raw.CurrentContext
	}
	return siteClient{context: contextName, namespace: namespace, client: c}, nil
}

// contextNamespace is the namespace the context names, else the default:
// kubectl's "default" is never where a site keeps its objects.
func contextNamespace(loader clientcmd.ClientConfig, contextName string) string {
	raw, err := loader.RawConfig()
	if err != nil {
		return defaultNamespace
	}
	if contextName == "" {
		contextName = raw.CurrentContext
	}
	if c, ok := raw.Contexts[contextName]; ok && c.Namespace != "" {
		return c.Namespace
	}
	return defaultNamespace
}

// contexts lists the kubeconfig's contexts, sorted.
func (k kubeFlags) contexts() ([]string, error) {
	raw, err := k.loader("").RawConfig()
	if err != nil {
		return nil, fmt.Errorf("failed to read the kubeconfig: %w", err)
	}
	var names []string
	for name := range raw.Contexts {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// table is one kind as batonctl get prints it.
type table struct {
	list    func() client.ObjectList
	columns []string
	row     func(o runtime.Object, now time.Time) []string
}

func tables() map[string]table {
	clusters := table{list: func() client.ObjectList { return &v1.StorageClusterList{} },
		columns: []string{"NAME", "CLUSTER ID", "BACKEND", "PHASE", "NODES", "READY", "AGE"},
		row: func(o runtime.Object, now time.Time) []string {
			c := o.(*v1.StorageCluster)
			return []string{c.Name, string(c.Spec.ClusterID), string(c.Spec.Pool.Backend), string(c.Status.Phase),
				fmt.Sprint(c.Status.NodeCount), fmt.Sprint(c.Status.ReadyNodeCount), age(c.CreationTimestamp, now)}
		}}
	nodes := table{list: func() client.ObjectList { return &v1.StorageNodeList{} },
		columns: []string{"NAME", "CLUSTER", "NODE", "ADDRESS", "REACHABLE", "READY", "AGE"},
		row: func(o runtime.Object, now time.Time) []string {
			n := o.(*v1.StorageNode)
			return []string{n.Name, n.Spec.Cluster, n.Spec.NodeName, n.Spec.Address, fmt.Sprint(n.Status.Reachable),
				conditionStatus(n.Status.Conditions, v1.StorageNodeReadyCondition), age(n.CreationTimestamp, now)}
		}}
	volumes := table{list: func() client.ObjectList { return &v1.VolumeList{} },
		columns: []string{"NAME", "ROOT", "GEN", "STATE", "SIZE", "MODE", "CSI NAME", "AGE"},
		row: func(o runtime.Object, now time.Time) []string {
			v := o.(*v1.Volume)
			return []string{v.Name, string(v.Spec.RootHandle), fmt.Sprint(v.Spec.Generation), string(v.Status.State),
				fmt.Sprint(v.Spec.SizeBytes), string(v.Spec.VolumeMode), v.Spec.CSIName, age(v.CreationTimestamp, now)}
		}}
	replications := table{list: func() client.ObjectList { return &v1.ReplicationList{} },
		columns: []string{"NAME", "SOURCE", "TARGET", "ENABLED", "PHASE", "LAST SYNC", "AGE"},
		row: func(o runtime.Object, now time.Time) []string {
			r := o.(*v1.Replication)
			lastSync := ""
			if r.Status.LastSyncTime != nil {
				lastSync = age(*r.Status.LastSyncTime, now)
			}
			return []string{r.Name, string(r.Spec.SourceVolume), string(r.Spec.TargetCluster), fmt.Sprint(r.Spec.Enabled),
				string(r.Status.Phase), lastSync, age(r.CreationTimestamp, now)}
		}}
	return map[string]table{
		"clusters": clusters, "cluster": clusters, "storageclusters": clusters,
		"nodes": nodes, "node": nodes, "storagenodes": nodes,
		"volumes": volumes, "volume": volumes,
		"replications": replications, "replication": replications,
	}
}

func newGetCommand(env environment) *cobra.Command {
	var k kubeFlags
	cmd := &cobra.Command{
		Use:   "get clusters|nodes|volumes|replications",
		Short: "list a site's storage clusters, nodes, volumes or replications",
		Long: `get lists one kind of a site's storage objects with kubectl-like columns.
The site is a kubeconfig context (--context, else the current one); its
objects live in -n, else the context's namespace, else baton-system.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"clusters", "nodes", "volumes", "replications"},
		RunE: func(cmd *cobra.Command, args []string) error {
			t, ok := tables()[strings.ToLower(args[0])]
			if !ok {
				return fmt.Errorf("unknown kind %q: want clusters, nodes, volumes or replications", args[0])
			}
			site, err := k.open(k.context)
			if err != nil {
				return err
			}
			return printTable(cmd.Context(), cmd.OutOrStdout(), site, t, env.now())
		},
	}
	k.register(cmd, true)
	return cmd
}

func printTable(ctx context.Context, out io.Writer, site siteClient, t table, now time.Time) error {
	list := t.list()
	if err := site.client.List(ctx, list, client.InNamespace(site.namespace)); err != nil {
		return fmt.Errorf("failed to list in %s (context %s): %w", site.namespace, site.context, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		_, err := fmt.Fprintf(out, "No resources found in %s namespace.\n", site.namespace)
		return err
	}
	slices.SortFunc(items, func(a, b runtime.Object) int {
		return cmp.Compare(a.(metav1.Object).GetName(), b.(metav1.Object).GetName())
	})
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, strings.Join(t.columns, "\t"))
	for _, item := range items {
		cells := t.row(item, now)
		for i, cell := range cells {
			if cell == "" {
				cells[i] = "<none>"
			}
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	return w.Flush()
}

func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func conditionStatus(conditions []metav1.Condition, conditionType string) string {
	if c := meta.FindStatusCondition(conditions, conditionType); c != nil {
		return string(c.Status)
	}
	return "Unknown"
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t) }
