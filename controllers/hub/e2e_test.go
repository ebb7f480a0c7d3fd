package hub

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/internal/syncio"
)

// The end-to-end test runs the hub on one real API server and a site on
// another, with Open Cluster Management's own work agent (built by
// testdata/ocm/build.sh) between them: it watches the site's namespace on the
// hub, applies the works on the site's API server and reports their status
// and feedback. The view agent (stolostron's work-manager add-on) is not
// served by the module proxy, so the test answers the views itself from the
// site's API server. The site operator's moves are the test's.

// workAgentBinary finds the agent: $BATON_OCM_WORK_AGENT, else the build
// script's cache when it is warm. The test is skipped without one.
func workAgentBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts two control planes and the OCM work agent; skipped under -short")
	}
	if path := os.Getenv("BATON_OCM_WORK_AGENT"); path != "" {
		return path
	}
	out, err := exec.Command("bash", filepath.Join(repositoryRoot(), "controllers", "hub", "testdata", "ocm", "build.sh"), "--warm-only").Output()
	path := strings.TrimSpace(string(out))
	if err != nil || path == "" {
		t.Skip("no OCM work agent: run controllers/hub/testdata/ocm/build.sh (about 11 minutes cold) or set BATON_OCM_WORK_AGENT")
	}
	return path
}

// writeKubeconfig writes an admin kubeconfig of a control plane.
func writeKubeconfig(t *testing.T, config *rest.Config, name string) string {
	t.Helper()
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters[name] = &clientcmdapi.Cluster{Server: config.Host, CertificateAuthorityData: config.CAData}
	kubeconfig.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: config.CertData, ClientKeyData: config.KeyData}
	kubeconfig.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kubeconfig.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestEndToEndWithTheOCMWorkAgent(t *testing.T) {
	agentBinary := workAgentBinary(t)
	ocm, err := ocmCRDs()
	if err != nil {
		t.Fatal(err)
	}
	crds := filepath.Join(repositoryRoot(), "deploy", "crds")
	hubREST := controlplanetest.Start(t, append(ocm, crds, filepath.Join(repositoryRoot(), "controllers", "hub", "testdata", "crds"))...)
	applied := strings.Replace(ocm[0], "0000_00_work.open-cluster-management.io_manifestworks", "0000_01_work.open-cluster-management.io_appliedmanifestworks", 1)
	siteREST := controlplanetest.Start(t, crds, applied)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	scheme := envScheme(t)
	hubClient, err := client.New(hubREST, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	siteClient, err := client.New(siteREST, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: siteA}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNS}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: siteA}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
	} {
		if err := hubClient.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{siteNS, "open-cluster-management-agent"} {
		if err := siteClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}

	// The work agent, as a klusterlet runs it: the hub's kubeconfig for the
	// site's namespace, the site's for applying.
	hubKubeconfig, siteKubeconfig := writeKubeconfig(t, hubREST, "hub"), writeKubeconfig(t, siteREST, "site")
	agentLog := &syncio.Buffer{}
	agent := exec.CommandContext(ctx, agentBinary, "agent",
		"--spoke-cluster-name="+siteA, "--workload-source-config="+hubKubeconfig, "--hub-kubeconfig="+hubKubeconfig,
		"--kubeconfig="+siteKubeconfig, "--namespace=open-cluster-management-agent", "--disable-leader-election",
		"--listen=127.0.0.1:"+strconv.Itoa(freePort(t)), "--status-sync-interval=1s")
	agent.Stdout, agent.Stderr = agentLog, agentLog
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = agent.Process.Kill()
		_ = agent.Wait()
	})

	// The hub: the manager with the controllers, as baton-hub runs it.
	skip := true
	manager, err := ctrl.NewManager(hubREST, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: &skip}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&StorageSiteDeploymentReconciler{Client: manager.GetClient()}).SetupWithManager(manager); err != nil {
		t.Fatal(err)
	}
	if err := (&SiteTestFailoverReconciler{Client: manager.GetClient()}).SetupWithManager(manager); err != nil {
		t.Fatal(err)
	}
	managerCtx, stopManager := context.WithCancel(ctx)
	managerDone := make(chan error, 1)
	go func() { managerDone <- manager.Start(managerCtx) }()
	defer func() {
		stopManager()
		if err := <-managerDone; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	views := &localAgent{t: t, hub: hubClient, c: siteClient, site: siteA}
	request := newRequest("site-a", siteA, false)
	if err := hubClient.Create(ctx, request); err != nil {
		t.Fatal(err)
	}
	// until waits for what the agent and the hub do in their own processes
	// and goroutines, answering the views on each poll.
	until := func(what string, check func() bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
			views.answerViews(ctx)
			_ = hubClient.Get(ctx, client.ObjectKeyFromObject(request), request)
			return check(), nil
		})
		if err != nil {
			t.Fatalf("%s: %v; request %s %s\nthe agent's log:\n%s", what, err, request.Status.Phase,
				conditionSummary(request.Status.Conditions), agentLog.Tail(4000))
		}
	}

	// The agent creates the run on the site and reports its feedback.
	ops := &v1.OperatorOps{}
	until("the agent creates the OperatorOps on the site", func() bool {
		return request.Status.Run != "" && siteClient.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: request.Status.Run}, ops) == nil
	})
	if len(ops.OwnerReferences) != 0 {
		t.Errorf("the run carries owner references %v: an orphaning work must not own it", ops.OwnerReferences)
	}
	until("the request reports the work applied", func() bool {
		return meta.IsStatusConditionTrue(request.Status.Conditions, v1.StorageSiteDeploymentDeliveredCondition)
	})

	// A changed discovery is a new run; the work drops the first, which the
	// agent leaves on the site (Orphan also covers a manifest leaving a work).
	first := ops.Name
	// Merge patches: the hub writes the request (finalizer, status) meanwhile.
	unchanged := client.MergeFrom(request.DeepCopy())
	request.Spec.Discovery.NodeNames = []string{"node-1", "node-2", "node-3"}
	if err := hubClient.Patch(ctx, request, unchanged); err != nil {
		t.Fatal(err)
	}
	until("the agent creates the second run", func() bool {
		return request.Status.Run != first && siteClient.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: request.Status.Run}, ops) == nil
	})
	until("the work carries the second run alone, applied", func() bool {
		return meta.IsStatusConditionTrue(request.Status.Conditions, v1.StorageSiteDeploymentDeliveredCondition)
	})
	old := &v1.OperatorOps{}
	if err := siteClient.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: first}, old); err != nil || old.DeletionTimestamp != nil {
		t.Errorf("the first run after the work dropped it: %v (it must stay on the site)", err)
	}
	siteOperator{t: t, c: siteClient}.completeRun(ctx, request.Status.Run, "site-a", threeNodes)
	until("the draft is projected for review", func() bool { return request.Status.Phase == v1.StorageSiteDeploymentDrafted })
	unchanged = client.MergeFrom(request.DeepCopy())
	request.Spec.Approved = true
	if err := hubClient.Patch(ctx, request, unchanged); err != nil {
		t.Fatal(err)
	}

	draft := &v1.ClusterDeploymentConfig{}
	until("the agent applies the sizing and the approval onto the draft", func() bool {
		return siteClient.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: "site-a"}, draft) == nil && draft.Spec.Approved
	})
	if got := managersOf(draft, "nodeSets"); !slices.Equal(got, []string{siteOperatorManager}) {
		t.Errorf("nodeSets are owned by %v, want the site operator alone", got)
	}
	if got := managersOf(draft, "sizing"); !slices.Equal(got, []string{FieldManager}) {
		t.Errorf("sizing is owned by %v, want %s alone (the real agent applies as the work's field manager)", got, FieldManager)
	}

	siteOperator{t: t, c: siteClient}.expand(ctx, "site-a")
	until("the request is Online with its three nodes", func() bool {
		return request.Status.Phase == v1.StorageSiteDeploymentOnline && request.Status.ReadyNodeCount == 3
	})
	if c := request.Status.Cluster; c == nil || c.ClusterID != clusterID || c.Pool != "baton" || len(c.Nodes) != 3 {
		t.Errorf("status.cluster %+v", c)
	}
	var works workv1.ManifestWorkList
	if err := hubClient.List(ctx, &works, client.InNamespace(siteA)); err != nil || len(works.Items) != 1 {
		t.Fatalf("works: %v", err)
	}
	t.Logf("the work at Online: generation %d, %d manifests", works.Items[0].Generation, len(works.Items[0].Spec.Workload.Manifests))
	if g := works.Items[0].Generation; g != 4 {
		t.Errorf("the work is at generation %d: the hub writes it once per step (two runs, sizing, approval)", g)
	}

	// Withdrawing the request: the work goes (the agent drops its finalizer
	// once it has released the applied resources), the storage stays.
	if err := hubClient.Delete(ctx, request); err != nil {
		t.Fatal(err)
	}
	until("the work is gone from the hub", func() bool {
		return hubClient.List(ctx, &works, client.InNamespace(siteA)) == nil && len(works.Items) == 0
	})
	for name, o := range map[string]client.Object{ops.Name: &v1.OperatorOps{}, "site-a": &v1.ClusterDeploymentConfig{}} {
		if err := siteClient.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: name}, o); err != nil || o.GetDeletionTimestamp() != nil {
			t.Errorf("%T %s after the request was withdrawn: %v", o, name, err)
		}
	}
	cluster := &v1.StorageCluster{}
	if err := siteClient.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: "site-a"}, cluster); err != nil || cluster.DeletionTimestamp != nil {
		t.Errorf("the storage cluster after the request was withdrawn: %v", err)
	}

	// A drill goes the other way: its work owns the TestFailover (Foreground),
	// and withdrawing the request deletes it on the site.
	drill := newDrill(siteA)
	if err := hubClient.Create(ctx, drill); err != nil {
		t.Fatal(err)
	}
	siteDrill := &v1.TestFailover{}
	drillName := siteTestFailoverName(hubNS, drill.Name)
	until("the agent creates the drill on the site", func() bool {
		return siteClient.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: drillName}, siteDrill) == nil
	})
	if len(siteDrill.OwnerReferences) != 1 || siteDrill.OwnerReferences[0].Kind != "AppliedManifestWork" {
		t.Errorf("the drill's owners %v, want its AppliedManifestWork", siteDrill.OwnerReferences)
	}
	if err := hubClient.Delete(ctx, drill); err != nil {
		t.Fatal(err)
	}
	// The control planes run no garbage collector, so the drill is left
	// terminating (foreground deletion) rather than gone.
	until("the agent deletes the drill on the site", func() bool {
		err := siteClient.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: drillName}, siteDrill)
		return apierrors.IsNotFound(err) || (err == nil && siteDrill.DeletionTimestamp != nil)
	})
	t.Logf("the agent's log (tail):\n%s", agentLog.Tail(4000))
}
