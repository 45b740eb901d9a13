/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * node-mem.c - what a calling-context node takes, on real recordings:
 * the analysis budget charged in all (nodes, index, covariances,
 * histograms, slowest calls) over the nodes, and the histograms' and the
 * slowest calls' shares of it.
 *
 *   node-mem FILE...
 */
#include <config.h>

#include <stdio.h>

#include "core/recording.h"

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct vp_recording *rec;
		char msg[512];
		size_t hist = 0, slow = 0, n;
		int err = vp_recording_open(argv[i], NULL, &rec, msg, sizeof(msg));

		if (err < 0) {
			fprintf(stderr, "node-mem: %s\n", msg);
			return 1;
		}
		n = rec->tree.nnodes;
		for (size_t j = 0; j < n; j++) {
			const struct vp_cct_node *nd = &rec->tree.nodes[j];

			hist += vp_hist_bytes(&nd->hist);
			slow += nd->slowest.cap * sizeof(*nd->slowest.calls);
			for (uint32_t k = 0; k < nd->slowest.n; k++)
				slow += nd->slowest.calls[k].nparts * sizeof(struct vp_slow_part);
		}
		printf("%s: %zu nodes, %zu bytes charged, %.0f bytes/node "
		       "(histograms %.0f, slowest calls %.0f)\n",
		       argv[i], n, rec->budget.used, (double)rec->budget.used / (double)n,
		       (double)hist / (double)n, (double)slow / (double)n);
		vp_recording_free(rec);
	}
	return 0;
}
