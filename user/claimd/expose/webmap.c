// SPDX-License-Identifier: GPL-2.0
/* The service map page; see webmap.h. The HTML lives in user/claimd/expose/webmap.html. */
#include <stdlib.h>
#include <string.h>

#include "expose/webmap.h"

#define GRAPH_MARK "@@GRAPH_JSON@@"

/* user/claimd/expose/webmap.html, NUL-terminated; paths are relative to the top directory,
 * where make runs the compiler (the Makefile makes webmap.o depend on it). */
__asm__(".section .rodata\n"
	".global claimd_webmap_html\n"
	".type claimd_webmap_html, @object\n"
	"claimd_webmap_html:\n"
	".incbin \"user/claimd/expose/webmap.html\"\n"
	".byte 0\n"
	".size claimd_webmap_html, . - claimd_webmap_html\n"
	".previous\n");
extern const char claimd_webmap_html[];

/* Inside <script>, "</script>" or "<!--" in a service name would end or
 * confuse the element: JSON lets every '<', '>' and '&' be written escaped. */
static size_t escaped_len(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += strchr("<>&", *s) ? 6 : 1;
	return n;
}

static char *put_escaped(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (; *s; s++) {
		if (!strchr("<>&", *s)) {
			*out++ = *s;
			continue;
		}
		memcpy(out, "\\u00", 4);
		out[4] = hex[(unsigned char)*s >> 4];
		out[5] = hex[*s & 15];
		out += 6;
	}
	return out;
}

char *webmap__page(const char *graph_json, size_t *len)
{
	const char *mark = strstr(claimd_webmap_html, GRAPH_MARK), *tail;
	size_t head_len, tail_len;
	char *page, *p;

	if (!mark)
		mark = claimd_webmap_html + strlen(claimd_webmap_html);
	head_len = mark - claimd_webmap_html;
	tail = *mark ? mark + strlen(GRAPH_MARK) : mark;
	tail_len = strlen(tail);
	page = malloc(head_len + escaped_len(graph_json) + tail_len + 1);
	if (!page)
		return NULL;
	memcpy(page, claimd_webmap_html, head_len);
	p = put_escaped(page + head_len, graph_json);
	memcpy(p, tail, tail_len + 1);
	*len = p + tail_len - page;
	return page;
}
