/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live service map: one HTML page (webmap.html beside this file, embedded in claimd
 * at build time) with inline CSS and JS that draws the graph (graph.h) as
 * SVG and polls /graph.json to redraw it. No external assets, no fetch but
 * /graph.json. The page comes with the current graph inside it, so it
 * draws the first map while it loads.
 */
#ifndef CLAIMD_WEBMAP_H
#define CLAIMD_WEBMAP_H

#include <stddef.h>

/* The page with graph_json (a JSON text, or "null") embedded; malloc'd, its
 * length in len. NULL when out of memory. */
char *webmap__page(const char *graph_json, size_t *len);

#endif
