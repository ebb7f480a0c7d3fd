/* The pod sandbox's process: sleeps until SIGINT/SIGTERM and reaps orphans,
 * which is all Kubernetes' pause container does. Ours because no registry is
 * reachable here; built static so it runs in an image FROM scratch. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signo) { (void)signo; _exit(0); }

static void reap(int signo) {
	(void)signo;
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
}

int main(void) {
	struct sigaction down = {.sa_handler = stop};
	struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
	sigemptyset(&down.sa_mask);
	sigemptyset(&child.sa_mask);
	if (sigaction(SIGINT, &down, NULL) < 0 || sigaction(SIGTERM, &down, NULL) < 0 ||
	    sigaction(SIGCHLD, &child, NULL) < 0)
		return 1;
	for (;;)
		pause();
}
