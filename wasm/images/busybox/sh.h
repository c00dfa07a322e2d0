// sh.h: the shell of busybox.c (included once, at its end). A POSIX-style
// subset: simple commands, pipelines (|), lists (; & && || and newlines),
// ! , if/then/elif/else/fi, while/until/do/done, for/in/do/done, { } and
// ( ), redirections (< > >> 2> 2>> 2>&1 >&2), variables ($NAME ${NAME}
// ${NAME:-word} $? $$ $# $0-$9 $@ $*), command substitution ($(...) and
// `...`), quoting (' " \), * and ? globbing in the last path component,
// and the builtins cd, export, unset, exit, read, set, shift, eval, exec,
// break, continue, :, type and command -v.
//
// No fork: every command runs in this instance (an applet) or through the
// runtime (spawn); a pipeline runs its stages one after the other, each
// reading what the previous one wrote to memory. A & runs in the
// foreground. A subshell ( ) shares variables with its parent.
#include <fnmatch.h>
#include <stdarg.h>

// ---- tokens

enum { T_WORD, T_NL, T_SEMI, T_AMP, T_AND, T_OR, T_PIPE, T_LPAREN, T_RPAREN, T_REDIR, T_EOF, T_ERR };
enum { R_IN, R_OUT, R_APPEND, R_DUP };

typedef struct {
	int type;
	char *text; // a word's raw text (quotes kept); a redirection's target
	int fd, op; // redirection: the fd, the operation; R_DUP: text is the fd
} tok;

typedef struct {
	const char *s;
	size_t pos;
	tok cur;
	int incomplete; // input ended inside a quote or a compound command
	int error;
} lexer;

static int is_op_char(char c) { return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>'; }

// skip_balanced moves past a $( ... ) or ` ... `; it returns 0 at end of input.
static int skip_balanced(lexer *lx, char open, char close) {
	int depth = 1;
	while (lx->s[lx->pos]) {
		char c = lx->s[lx->pos++];
		if (c == '\\' && lx->s[lx->pos]) {
			lx->pos++;
		} else if (c == '\'' && open != '`') {
			while (lx->s[lx->pos] && lx->s[lx->pos] != '\'') {
				lx->pos++;
			}
			if (lx->s[lx->pos]) {
				lx->pos++;
			}
		} else if (c == close && (open == close || --depth == 0)) {
			return 1;
		} else if (c == open && open != close) {
			depth++;
		}
	}
	return 0;
}

static void next(lexer *lx) {
	const char *s = lx->s;
	for (;;) {
		while (s[lx->pos] == ' ' || s[lx->pos] == '\t' || (s[lx->pos] == '\\' && s[lx->pos + 1] == '\n')) {
			lx->pos += s[lx->pos] == '\\' ? 2 : 1;
		}
		if (s[lx->pos] == '#') {
			while (s[lx->pos] && s[lx->pos] != '\n') {
				lx->pos++;
			}
		}
		break;
	}
	tok t = {0};
	char c = s[lx->pos];
	if (c == '\0') {
		t.type = T_EOF;
		lx->cur = t;
		return;
	}
	if (c == '\n') {
		lx->pos++;
		t.type = T_NL;
		lx->cur = t;
		return;
	}
	// An io number: digits right before < or >.
	size_t d = lx->pos;
	while (isdigit((unsigned char)s[d])) {
		d++;
	}
	int fd = -1;
	if (d > lx->pos && (s[d] == '<' || s[d] == '>')) {
		fd = atoi(s + lx->pos);
		lx->pos = d;
		c = s[lx->pos];
	}
	if (c == '<' || c == '>') {
		t.type = T_REDIR;
		lx->pos++;
		if (c == '<') {
			t.op = R_IN;
			t.fd = fd < 0 ? 0 : fd;
		} else if (s[lx->pos] == '>') {
			lx->pos++;
			t.op = R_APPEND;
			t.fd = fd < 0 ? 1 : fd;
		} else {
			t.op = R_OUT;
			t.fd = fd < 0 ? 1 : fd;
		}
		if (c == '>' && s[lx->pos] == '&' && t.op == R_OUT) {
			lx->pos++;
			t.op = R_DUP;
		}
		while (s[lx->pos] == ' ' || s[lx->pos] == '\t') {
			lx->pos++;
		}
		// the target word follows
		lexer sub = *lx;
		next(&sub);
		if (sub.cur.type != T_WORD) {
			lx->error = 1;
			t.type = T_ERR;
			lx->cur = t;
			return;
		}
		lx->pos = sub.pos;
		lx->incomplete |= sub.incomplete;
		t.text = sub.cur.text;
		lx->cur = t;
		return;
	}
	if (is_op_char(c)) {
		lx->pos++;
		char n = s[lx->pos];
		switch (c) {
		case ';': t.type = T_SEMI; break;
		case '&': if (n == '&') { lx->pos++; t.type = T_AND; } else t.type = T_AMP; break;
		case '|': if (n == '|') { lx->pos++; t.type = T_OR; } else t.type = T_PIPE; break;
		case '(': t.type = T_LPAREN; break;
		case ')': t.type = T_RPAREN; break;
		}
		lx->cur = t;
		return;
	}
	size_t start = lx->pos;
	while (s[lx->pos] && !isspace((unsigned char)s[lx->pos]) && !is_op_char(s[lx->pos])) {
		char ch = s[lx->pos++];
		if (ch == '\\') {
			if (s[lx->pos]) {
				lx->pos++;
			}
		} else if (ch == '\'') {
			while (s[lx->pos] && s[lx->pos] != '\'') {
				lx->pos++;
			}
			if (!s[lx->pos]) {
				lx->incomplete = 1;
				break;
			}
			lx->pos++;
		} else if (ch == '"') {
			while (s[lx->pos] && s[lx->pos] != '"') {
				if (s[lx->pos] == '\\' && s[lx->pos + 1]) {
					lx->pos++;
				} else if (s[lx->pos] == '$' && s[lx->pos + 1] == '(') {
					lx->pos += 2;
					if (!skip_balanced(lx, '(', ')')) {
						lx->incomplete = 1;
					}
					continue;
				}
				lx->pos++;
			}
			if (!s[lx->pos]) {
				lx->incomplete = 1;
				break;
			}
			lx->pos++;
		} else if (ch == '$' && s[lx->pos] == '(') {
			lx->pos++;
			if (!skip_balanced(lx, '(', ')')) {
				lx->incomplete = 1;
			}
		} else if (ch == '$' && s[lx->pos] == '{') {
			while (s[lx->pos] && s[lx->pos] != '}') {
				lx->pos++;
			}
			if (s[lx->pos]) {
				lx->pos++;
			}
		} else if (ch == '`') {
			if (!skip_balanced(lx, '`', '`')) {
				lx->incomplete = 1;
			}
		}
	}
	t.type = T_WORD;
	t.text = strndup(s + start, lx->pos - start);
	lx->cur = t;
}

// ---- the syntax tree

enum { N_SIMPLE, N_PIPE, N_AND, N_OR, N_NOT, N_SEQ, N_IF, N_WHILE, N_UNTIL, N_FOR, N_GROUP, N_SUBSHELL };

typedef struct redir {
	int fd, op;
	char *target;
	struct redir *next;
} redir;

typedef struct node {
	int type;
	struct node *a, *b, *c; // children: left/right, cond/then/else, body
	char **words;
	int nwords;
	redir *redirs;
	char *var; // for
} node;

static node *mknode(int type) {
	node *n = calloc(1, sizeof *n);
	n->type = type;
	return n;
}

static int is_word(lexer *lx, const char *kw) { return lx->cur.type == T_WORD && strcmp(lx->cur.text, kw) == 0; }

static node *parse_list(lexer *lx, int top);

static void skip_nl(lexer *lx) {
	while (lx->cur.type == T_NL) {
		next(lx);
	}
}

static int expect_word(lexer *lx, const char *kw) {
	skip_nl(lx);
	if (!is_word(lx, kw)) {
		if (lx->cur.type == T_EOF) {
			lx->incomplete = 1;
		}
		lx->error = 1;
		return 0;
	}
	next(lx);
	return 1;
}

static int is_reserved(lexer *lx) {
	static const char *kws[] = {"then", "else", "elif", "fi", "do", "done", "}", "in", NULL};
	if (lx->cur.type != T_WORD) {
		return 0;
	}
	for (int i = 0; kws[i]; i++) {
		if (strcmp(lx->cur.text, kws[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

static void add_redirs(lexer *lx, node *n) {
	redir **tail = &n->redirs;
	while (*tail) {
		tail = &(*tail)->next;
	}
	while (lx->cur.type == T_REDIR) {
		redir *r = calloc(1, sizeof *r);
		r->fd = lx->cur.fd, r->op = lx->cur.op, r->target = lx->cur.text;
		*tail = r;
		tail = &r->next;
		next(lx);
	}
}

static node *parse_command(lexer *lx) {
	node *n;
	if (is_word(lx, "if")) {
		next(lx);
		n = mknode(N_IF);
		n->a = parse_list(lx, 0);
		if (!expect_word(lx, "then")) return n;
		n->b = parse_list(lx, 0);
		skip_nl(lx);
		node *cur = n;
		while (is_word(lx, "elif")) {
			next(lx);
			node *e = mknode(N_IF);
			e->a = parse_list(lx, 0);
			if (!expect_word(lx, "then")) return n;
			e->b = parse_list(lx, 0);
			skip_nl(lx);
			cur->c = e;
			cur = e;
		}
		if (is_word(lx, "else")) {
			next(lx);
			cur->c = parse_list(lx, 0);
		}
		expect_word(lx, "fi");
	} else if (is_word(lx, "while") || is_word(lx, "until")) {
		n = mknode(is_word(lx, "while") ? N_WHILE : N_UNTIL);
		next(lx);
		n->a = parse_list(lx, 0);
		if (!expect_word(lx, "do")) return n;
		n->b = parse_list(lx, 0);
		expect_word(lx, "done");
	} else if (is_word(lx, "for")) {
		next(lx);
		n = mknode(N_FOR);
		if (lx->cur.type != T_WORD) {
			lx->error = 1;
			return n;
		}
		n->var = lx->cur.text;
		next(lx);
		skip_nl(lx);
		if (is_word(lx, "in")) {
			next(lx);
			while (lx->cur.type == T_WORD) {
				n->words = realloc(n->words, sizeof(char *) * (size_t)(n->nwords + 2));
				n->words[n->nwords++] = lx->cur.text;
				next(lx);
			}
		} else {
			n->nwords = -1; // "$@"
		}
		if (lx->cur.type == T_SEMI) {
			next(lx);
		}
		if (!expect_word(lx, "do")) return n;
		n->b = parse_list(lx, 0);
		expect_word(lx, "done");
	} else if (is_word(lx, "{")) {
		next(lx);
		n = mknode(N_GROUP);
		n->a = parse_list(lx, 0);
		expect_word(lx, "}");
	} else if (lx->cur.type == T_LPAREN) {
		next(lx);
		n = mknode(N_SUBSHELL);
		n->a = parse_list(lx, 0);
		skip_nl(lx);
		if (lx->cur.type != T_RPAREN) {
			if (lx->cur.type == T_EOF) {
				lx->incomplete = 1;
			}
			lx->error = 1;
			return n;
		}
		next(lx);
	} else {
		n = mknode(N_SIMPLE);
		n->words = calloc(1, sizeof(char *));
		for (;;) {
			if (lx->cur.type == T_REDIR) {
				add_redirs(lx, n);
			} else if (lx->cur.type == T_WORD && !(n->nwords == 0 && is_reserved(lx))) {
				n->words = realloc(n->words, sizeof(char *) * (size_t)(n->nwords + 2));
				n->words[n->nwords++] = lx->cur.text;
				n->words[n->nwords] = NULL;
				next(lx);
			} else {
				break;
			}
		}
		if (n->nwords == 0 && n->redirs == NULL) {
			lx->error = 1;
			if (lx->cur.type == T_EOF) {
				lx->incomplete = 1;
			}
		}
		return n;
	}
	add_redirs(lx, n);
	return n;
}

static node *parse_pipeline(lexer *lx) {
	int neg = 0;
	if (is_word(lx, "!")) {
		neg = 1;
		next(lx);
	}
	node *first = parse_command(lx);
	if (lx->cur.type == T_PIPE) {
		node *p = mknode(N_PIPE);
		p->words = (char **)calloc(1, sizeof(node *));
		node **stages = (node **)p->words;
		stages[0] = first;
		p->nwords = 1;
		while (lx->cur.type == T_PIPE && !lx->error) {
			next(lx);
			skip_nl(lx);
			stages = realloc(stages, sizeof(node *) * (size_t)(p->nwords + 1));
			stages[p->nwords++] = parse_command(lx);
		}
		p->words = (char **)stages;
		first = p;
	}
	if (neg) {
		node *n = mknode(N_NOT);
		n->a = first;
		return n;
	}
	return first;
}

static node *parse_and_or(lexer *lx) {
	node *left = parse_pipeline(lx);
	while ((lx->cur.type == T_AND || lx->cur.type == T_OR) && !lx->error) {
		node *n = mknode(lx->cur.type == T_AND ? N_AND : N_OR);
		next(lx);
		skip_nl(lx);
		n->a = left;
		n->b = parse_pipeline(lx);
		left = n;
	}
	return left;
}

// parse_list parses commands up to a reserved word, ')' or the end.
static node *parse_list(lexer *lx, int top) {
	node *list = NULL;
	for (;;) {
		skip_nl(lx);
		if (lx->cur.type == T_EOF || lx->cur.type == T_RPAREN || is_reserved(lx) || lx->error) {
			break;
		}
		node *n = parse_and_or(lx);
		if (list == NULL) {
			list = n;
		} else {
			node *s = mknode(N_SEQ);
			s->a = list, s->b = n;
			list = s;
		}
		if (lx->cur.type == T_SEMI || lx->cur.type == T_AMP) {
			next(lx);
		} else if (lx->cur.type != T_NL) {
			break;
		}
	}
	if (top && lx->cur.type != T_EOF && !lx->error) {
		lx->error = 1;
	}
	return list;
}

// ---- variables: the shell's own, then the environment

typedef struct var {
	char *name, *value;
	struct var *next;
} var;

static var *vars;
static int last_status;
static char **pos_args; // $1 ...
static int npos;
static char *arg0 = "sh";
static int exiting, breaking, continuing;

static const char *get_var(const char *name) {
	for (var *v = vars; v; v = v->next) {
		if (strcmp(v->name, name) == 0) {
			return v->value;
		}
	}
	return getenv(name);
}

static void set_var(const char *name, const char *value) {
	if (getenv(name) != NULL) {
		setenv(name, value, 1);
		return;
	}
	for (var *v = vars; v; v = v->next) {
		if (strcmp(v->name, name) == 0) {
			free(v->value);
			v->value = strdup(value);
			return;
		}
	}
	var *v = calloc(1, sizeof *v);
	v->name = strdup(name);
	v->value = strdup(value);
	v->next = vars;
	vars = v;
}

static void unset_var(const char *name) {
	unsetenv(name);
	for (var **v = &vars; *v; v = &(*v)->next) {
		if (strcmp((*v)->name, name) == 0) {
			*v = (*v)->next;
			return;
		}
	}
}

static void export_var(const char *name) {
	const char *v = get_var(name);
	setenv(name, v ? v : "", 1);
	for (var **p = &vars; *p; p = &(*p)->next) {
		if (strcmp((*p)->name, name) == 0) {
			*p = (*p)->next;
			break;
		}
	}
}

// ---- expansion

typedef struct {
	char **v;
	int n;
	char *cur;
	size_t len, cap;
	int have;  // the current field exists (even if empty: "")
	int glob;  // it has an unquoted * or ?
} fields;

static void f_putc(fields *f, char c) {
	if (f->len + 2 > f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->cur = realloc(f->cur, f->cap);
	}
	f->cur[f->len++] = c;
	f->cur[f->len] = '\0';
	f->have = 1;
}

static void f_end(fields *f);

static void f_push(fields *f, const char *s) {
	f->v = realloc(f->v, sizeof(char *) * (size_t)(f->n + 2));
	f->v[f->n++] = strdup(s);
	f->v[f->n] = NULL;
}

static void f_end(fields *f) {
	if (!f->have) {
		return;
	}
	const char *word = f->cur ? f->cur : "";
	int globbed = 0;
	if (f->glob) {
		// Match the last component against its directory's entries.
		char *dir = strdup(word), *slash = strrchr(dir, '/');
		const char *pat = word;
		const char *d = ".";
		if (slash) {
			*slash = '\0';
			pat = word + (slash - dir) + 1;
			d = dir[0] ? dir : "/";
		}
		if (strpbrk(dir, "*?") == NULL || slash == NULL) {
			DIR *dp = opendir(d);
			if (dp) {
				char **m = NULL;
				int nm = 0;
				struct dirent *e;
				while ((e = readdir(dp)) != NULL) {
					if (e->d_name[0] == '.' && pat[0] != '.') {
						continue;
					}
					if (fnmatch(pat, e->d_name, 0) == 0) {
						m = realloc(m, sizeof(char *) * (size_t)(nm + 1));
						char full[1024];
						if (slash) {
							snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
						} else {
							snprintf(full, sizeof full, "%s", e->d_name);
						}
						m[nm++] = strdup(full);
					}
				}
				closedir(dp);
				qsort(m, (size_t)nm, sizeof *m, name_cmp);
				for (int i = 0; i < nm; i++) {
					f_push(f, m[i]);
					free(m[i]);
				}
				free(m);
				globbed = nm > 0;
			}
		}
		free(dir);
	}
	if (!globbed) {
		f_push(f, word);
	}
	f->len = 0;
	if (f->cur) {
		f->cur[0] = '\0';
	}
	f->have = 0;
	f->glob = 0;
}

static int run_string(const char *src);

// command_output runs src and returns what it wrote, without the trailing
// newlines.
static char *command_output(const char *src) {
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	FILE *saved = OUT;
	OUT = m;
	run_string(src);
	fflush(m);
	OUT = saved;
	fclose(m);
	while (len > 0 && buf[len - 1] == '\n') {
		buf[--len] = '\0';
	}
	return buf;
}

// put_value adds an expansion's value: split into fields unless quoted.
static void put_value(fields *f, const char *v, int quoted) {
	if (v == NULL) {
		return;
	}
	if (quoted) {
		for (; *v; v++) {
			f_putc(f, *v);
		}
		f->have = 1;
		return;
	}
	for (; *v; v++) {
		if (*v == ' ' || *v == '\t' || *v == '\n') {
			f_end(f);
		} else {
			f_putc(f, *v);
		}
	}
}

static char *param(const char *name, char *buf, size_t n) {
	if (strcmp(name, "?") == 0) {
		snprintf(buf, n, "%d", last_status);
	} else if (strcmp(name, "$") == 0) {
		snprintf(buf, n, "%d", 1);
	} else if (strcmp(name, "#") == 0) {
		snprintf(buf, n, "%d", npos);
	} else if (strcmp(name, "0") == 0) {
		snprintf(buf, n, "%s", arg0);
	} else if (isdigit((unsigned char)name[0])) {
		int i = atoi(name);
		if (i > npos) {
			return NULL;
		}
		snprintf(buf, n, "%s", pos_args[i - 1]);
	} else {
		const char *v = get_var(name);
		if (v == NULL) {
			return NULL;
		}
		snprintf(buf, n, "%s", v);
	}
	return buf;
}

// expand_dollar expands what follows a $ at *pp.
static void expand_dollar(const char **pp, fields *f, int quoted) {
	const char *p = *pp;
	char name[256], val[8192];
	if (*p == '(') {
		const char *start = p + 1;
		int depth = 1;
		p++;
		while (*p && depth) {
			if (*p == '(') depth++;
			else if (*p == ')') depth--;
			if (depth) p++;
		}
		char *src = strndup(start, (size_t)(p - start));
		if (*p) p++;
		char *out = command_output(src);
		put_value(f, out, quoted);
		free(out);
		free(src);
		*pp = p;
		return;
	}
	if (*p == '{') {
		const char *end = strchr(p, '}');
		if (end == NULL) {
			f_putc(f, '$');
			return;
		}
		char inner[512];
		snprintf(inner, sizeof inner, "%.*s", (int)(end - p - 1), p + 1);
		*pp = end + 1;
		char *op = strpbrk(inner, ":-=+?");
		const char *word = NULL;
		char kind = 0;
		if (op && op != inner) {
			if (*op == ':' && op[1] && strchr("-=+?", op[1])) {
				kind = op[1];
				word = op + 2;
			} else if (*op != ':') {
				kind = *op;
				word = op + 1;
			}
			*op = '\0';
		}
		if (inner[0] == '#') {
			char *v = param(inner + 1, val, sizeof val);
			snprintf(name, sizeof name, "%zu", v ? strlen(v) : 0);
			put_value(f, name, quoted);
			return;
		}
		char *v = param(inner, val, sizeof val);
		int empty = v == NULL || v[0] == '\0';
		switch (kind) {
		case '-': if (empty) v = (char *)word; break;
		case '=': if (empty) { set_var(inner, word); v = (char *)word; } break;
		case '+': v = empty ? NULL : (char *)word; break;
		case '?': if (empty) { fprintf(ERR, "sh: %s: %s\n", inner, word && *word ? word : "parameter not set"); } break;
		}
		put_value(f, v, quoted);
		return;
	}
	if (*p == '@' || *p == '*') {
		for (int i = 0; i < npos; i++) {
			if (i > 0) {
				if (quoted && *p == '@') {
					f_end(f);
				} else {
					f_putc(f, ' ');
				}
			}
			put_value(f, pos_args[i], quoted);
		}
		if (npos == 0 && quoted && *p == '*') {
			f->have = 1;
		}
		*pp = p + 1;
		return;
	}
	size_t n = 0;
	if (*p == '?' || *p == '$' || *p == '#' || isdigit((unsigned char)*p)) {
		name[n++] = *p++;
	} else {
		while (isalnum((unsigned char)*p) || *p == '_') {
			if (n < sizeof name - 1) name[n++] = *p;
			p++;
		}
	}
	name[n] = '\0';
	*pp = p;
	if (n == 0) {
		f_putc(f, '$');
		return;
	}
	put_value(f, param(name, val, sizeof val), quoted);
}

// expand turns a raw word into fields.
static void expand(const char *w, fields *f) {
	const char *p = w;
	while (*p) {
		char c = *p++;
		if (c == '\'') {
			f->have = 1;
			while (*p && *p != '\'') {
				f_putc(f, *p++);
			}
			if (*p) p++;
		} else if (c == '"') {
			f->have = 1;
			while (*p && *p != '"') {
				if (*p == '\\' && p[1] && strchr("$`\"\\\n", p[1])) {
					f_putc(f, p[1]);
					p += 2;
				} else if (*p == '$') {
					p++;
					expand_dollar(&p, f, 1);
				} else if (*p == '`') {
					const char *end = strchr(p + 1, '`');
					if (!end) end = p + strlen(p);
					char *src = strndup(p + 1, (size_t)(end - p - 1));
					char *out = command_output(src);
					put_value(f, out, 1);
					free(out), free(src);
					p = *end ? end + 1 : end;
				} else {
					f_putc(f, *p++);
				}
			}
			if (*p) p++;
		} else if (c == '\\') {
			if (*p) f_putc(f, *p++);
		} else if (c == '$') {
			expand_dollar(&p, f, 0);
		} else if (c == '`') {
			const char *end = strchr(p, '`');
			if (!end) end = p + strlen(p);
			char *src = strndup(p, (size_t)(end - p));
			char *out = command_output(src);
			put_value(f, out, 0);
			free(out), free(src);
			p = *end ? end + 1 : end;
		} else {
			if (c == '*' || c == '?') {
				f->glob = 1;
			}
			f_putc(f, c);
		}
	}
	f_end(f);
}

// expand_one is a word expanded without splitting (a redirection's target,
// an assignment's value).
static char *expand_one(const char *w) {
	fields f = {0};
	expand(w, &f);
	size_t len = 0;
	for (int i = 0; i < f.n; i++) {
		len += strlen(f.v[i]) + 1;
	}
	char *s = calloc(1, len + 1);
	for (int i = 0; i < f.n; i++) {
		if (i) strcat(s, " ");
		strcat(s, f.v[i]);
	}
	return s;
}

// ---- execution

static int exec_node(node *n);

static int is_assignment(const char *w) {
	if (!(isalpha((unsigned char)*w) || *w == '_')) {
		return 0;
	}
	while (isalnum((unsigned char)*w) || *w == '_') {
		w++;
	}
	return *w == '=';
}

typedef struct {
	rd *in;
	FILE *out, *err;
	rd own_in;
	FILE *opened[8];
	int nopened;
} saved_io;

static int apply_redirs(redir *r, saved_io *s) {
	s->in = IN, s->out = OUT, s->err = ERR;
	s->nopened = 0;
	for (; r; r = r->next) {
		char *target = expand_one(r->target);
		if (r->op == R_DUP) {
			FILE *to = strcmp(target, "1") == 0 ? OUT : strcmp(target, "2") == 0 ? ERR : NULL;
			if (to == NULL) {
				fprintf(ERR, "sh: %s: bad file descriptor\n", target);
				free(target);
				return 1;
			}
			if (r->fd == 1) OUT = to;
			else if (r->fd == 2) ERR = to;
			free(target);
			continue;
		}
		const char *mode = r->op == R_IN ? "r" : r->op == R_APPEND ? "a" : "w";
		FILE *f = strcmp(target, "/dev/null") == 0 && r->op != R_IN ? open_memstream(&(char *){NULL}, &(size_t){0}) : fopen(target, mode);
		if (f == NULL && strcmp(target, "/dev/null") == 0) {
			f = fmemopen((char[1]){0}, 1, "r");
		}
		if (f == NULL) {
			fprintf(ERR, "sh: can't %s %s: %s\n", r->op == R_IN ? "open" : "create", target, strerror(errno));
			free(target);
			return 1;
		}
		free(target);
		if (s->nopened < 8) {
			s->opened[s->nopened++] = f;
		}
		if (r->op == R_IN) {
			memset(&s->own_in, 0, sizeof s->own_in);
			s->own_in.f = f;
			IN = &s->own_in;
		} else if (r->fd == 1) {
			OUT = f;
		} else if (r->fd == 2) {
			ERR = f;
		}
	}
	return 0;
}

static void restore_io(saved_io *s) {
	fflush(OUT);
	fflush(ERR);
	for (int i = 0; i < s->nopened; i++) {
		fclose(s->opened[i]);
	}
	IN = s->in, OUT = s->out, ERR = s->err;
}

static int builtin(int argc, char **argv, int *rc) {
	const char *c = argv[0];
	if (strcmp(c, "cd") == 0) {
		const char *d = argc > 1 ? argv[1] : get_var("HOME");
		if (d == NULL) d = "/";
		if (strcmp(d, "-") == 0) d = get_var("OLDPWD") ? get_var("OLDPWD") : ".";
		char old[1024];
		if (getcwd(old, sizeof old) == NULL) old[0] = '\0';
		if (chdir(d) != 0) {
			fprintf(ERR, "sh: cd: can't cd to %s: %s\n", d, strerror(errno));
			*rc = 2;
		} else {
			char now[1024];
			setenv("OLDPWD", old, 1);
			if (getcwd(now, sizeof now) != NULL) setenv("PWD", now, 1);
			*rc = 0;
		}
	} else if (strcmp(c, "export") == 0) {
		for (int i = 1; i < argc; i++) {
			char *eq = strchr(argv[i], '=');
			if (eq) {
				*eq = '\0';
				unset_var(argv[i]);
				setenv(argv[i], eq + 1, 1);
			} else if (strcmp(argv[i], "-p") != 0) {
				export_var(argv[i]);
			}
		}
		if (argc == 1 || (argc == 2 && strcmp(argv[1], "-p") == 0)) {
			for (char **e = environ; *e; e++) {
				char *eq = strchr(*e, '=');
				fprintf(OUT, "export %.*s='%s'\n", (int)(eq - *e), *e, eq + 1);
			}
		}
		*rc = 0;
	} else if (strcmp(c, "unset") == 0) {
		for (int i = 1; i < argc; i++) {
			if (argv[i][0] != '-') unset_var(argv[i]);
		}
		*rc = 0;
	} else if (strcmp(c, "exit") == 0) {
		exiting = 1;
		*rc = argc > 1 ? atoi(argv[1]) & 0xff : last_status;
	} else if (strcmp(c, ":") == 0) {
		*rc = 0;
	} else if (strcmp(c, "break") == 0 || strcmp(c, "continue") == 0) {
		if (c[0] == 'b') breaking = 1; else continuing = 1;
		*rc = 0;
	} else if (strcmp(c, "shift") == 0) {
		int k = argc > 1 ? atoi(argv[1]) : 1;
		if (k > npos) {
			*rc = 1;
		} else {
			pos_args += k, npos -= k;
			*rc = 0;
		}
	} else if (strcmp(c, "set") == 0) {
		if (argc == 1) {
			for (var *v = vars; v; v = v->next) fprintf(OUT, "%s='%s'\n", v->name, v->value);
			for (char **e = environ; *e; e++) fprintf(OUT, "%s\n", *e);
		} else {
			int i = 1;
			while (i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0) i++;
			if (i < argc && strcmp(argv[i], "--") == 0) i++;
			if (i < argc || (argc > 1 && strcmp(argv[argc - 1], "--") == 0)) {
				pos_args = argv + i;
				npos = argc - i;
				char **copy = calloc((size_t)npos + 1, sizeof *copy);
				for (int k = 0; k < npos; k++) copy[k] = strdup(pos_args[k]);
				pos_args = copy;
			}
		}
		*rc = 0;
	} else if (strcmp(c, "read") == 0) {
		int i = 1, raw = 0;
		for (; i < argc && argv[i][0] == '-'; i++) {
			if (strchr(argv[i], 'r')) raw = 1;
			if (strchr(argv[i], 'p') && i + 1 < argc) fputs(argv[++i], ERR), fflush(ERR);
		}
		(void)raw;
		char *line = NULL;
		size_t cap = 0;
		if (rd_line(IN, &line, &cap) == NULL) {
			*rc = 1;
			for (; i < argc; i++) set_var(argv[i], "");
			return 1;
		}
		char *s = line;
		for (; i < argc; i++) {
			while (*s == ' ' || *s == '\t') s++;
			if (i == argc - 1) {
				size_t n = strlen(s);
				while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
				set_var(argv[i], s);
				break;
			}
			char *e = s + strcspn(s, " \t");
			char save = *e;
			*e = '\0';
			set_var(argv[i], s);
			s = save ? e + 1 : e;
		}
		if (argc == 1) set_var("REPLY", line);
		free(line);
		*rc = 0;
	} else if (strcmp(c, "eval") == 0) {
		size_t len = 1;
		for (int i = 1; i < argc; i++) len += strlen(argv[i]) + 1;
		char *src = calloc(1, len);
		for (int i = 1; i < argc; i++) {
			if (i > 1) strcat(src, " ");
			strcat(src, argv[i]);
		}
		*rc = run_string(src);
		free(src);
	} else if (strcmp(c, "exec") == 0) {
		if (argc == 1) {
			*rc = 0;
		} else {
			*rc = run_argv(argc - 1, argv + 1);
			exiting = 1;
		}
	} else if (strcmp(c, "type") == 0 || (strcmp(c, "command") == 0 && argc > 2 && strcmp(argv[1], "-v") == 0)) {
		int i = c[0] == 't' ? 1 : 2;
		*rc = 0;
		for (; i < argc; i++) {
			static const char *bi[] = {"cd", "export", "unset", "exit", ":", "break", "continue", "shift", "set", "read", "eval", "exec", "type", "command", "wait", "trap", NULL};
			int isb = 0;
			for (int k = 0; bi[k]; k++) isb |= strcmp(bi[k], argv[i]) == 0;
			char *p = isb ? NULL : find_in_path(argv[i]);
			if (isb) fprintf(OUT, c[0] == 't' ? "%s is a shell builtin\n" : "%s\n", argv[i]);
			else if (p) fprintf(OUT, c[0] == 't' ? "%s is %s\n" : "%s\n", c[0] == 't' ? argv[i] : p, p);
			else { if (c[0] == 't') fprintf(OUT, "%s: not found\n", argv[i]); *rc = 1; }
			free(p);
		}
	} else if (strcmp(c, "wait") == 0 || strcmp(c, "trap") == 0 || strcmp(c, "umask") == 0) {
		*rc = 0;
	} else {
		return 0;
	}
	return 1;
}

static int exec_simple(node *n) {
	fields f = {0};
	int nassign = 0;
	while (nassign < n->nwords && is_assignment(n->words[nassign])) {
		nassign++;
	}
	for (int i = nassign; i < n->nwords; i++) {
		expand(n->words[i], &f);
	}
	saved_io s;
	if (apply_redirs(n->redirs, &s) != 0) {
		restore_io(&s);
		return 1;
	}
	int rc = 0;
	if (f.n == 0) {
		for (int i = 0; i < nassign; i++) {
			char *eq = strchr(n->words[i], '=');
			char *name = strndup(n->words[i], (size_t)(eq - n->words[i]));
			char *val = expand_one(eq + 1);
			set_var(name, val);
			free(name), free(val);
		}
		restore_io(&s);
		return 0;
	}
	// NAME=value before a command: in its environment only.
	char **saved = calloc((size_t)nassign + 1, sizeof *saved);
	char **names = calloc((size_t)nassign + 1, sizeof *names);
	for (int i = 0; i < nassign; i++) {
		char *eq = strchr(n->words[i], '=');
		names[i] = strndup(n->words[i], (size_t)(eq - n->words[i]));
		const char *old = getenv(names[i]);
		saved[i] = old ? strdup(old) : NULL;
		char *val = expand_one(eq + 1);
		setenv(names[i], val, 1);
		free(val);
	}
	if (!builtin(f.n, f.v, &rc)) {
		rc = run_argv(f.n, f.v);
	}
	for (int i = 0; i < nassign; i++) {
		if (saved[i]) setenv(names[i], saved[i], 1);
		else unsetenv(names[i]);
		free(saved[i]), free(names[i]);
	}
	free(saved), free(names);
	restore_io(&s);
	return rc;
}

static int exec_pipe(node *n) {
	node **stages = (node **)n->words;
	rd *saved_in = IN;
	FILE *saved_out = OUT;
	rd buf_in = {0};
	char *buf = NULL;
	size_t len = 0;
	int rc = 0;
	for (int i = 0; i < n->nwords; i++) {
		char *next_buf = NULL;
		size_t next_len = 0;
		FILE *m = NULL;
		if (i > 0) {
			memset(&buf_in, 0, sizeof buf_in);
			buf_in.buf = buf ? buf : "";
			buf_in.len = len;
			IN = &buf_in;
		}
		if (i + 1 < n->nwords) {
			m = open_memstream(&next_buf, &next_len);
			OUT = m;
		} else {
			OUT = saved_out;
		}
		rc = exec_node(stages[i]);
		if (m) {
			fflush(m);
			fclose(m);
		}
		free(buf);
		buf = next_buf, len = next_len;
		if (exiting) {
			break;
		}
	}
	free(buf);
	IN = saved_in, OUT = saved_out;
	return rc;
}

static int exec_node(node *n) {
	if (n == NULL || exiting) {
		return last_status;
	}
	if (intr_pending()) {
		return last_status = 130; // Ctrl-C: the rest of the line does not run
	}
	int rc = 0;
	switch (n->type) {
	case N_SIMPLE: rc = exec_simple(n); break;
	case N_PIPE: rc = exec_pipe(n); break;
	case N_NOT: rc = !exec_node(n->a); break;
	case N_AND: rc = exec_node(n->a); if (rc == 0 && !exiting) rc = exec_node(n->b); break;
	case N_OR: rc = exec_node(n->a); if (rc != 0 && !exiting) rc = exec_node(n->b); break;
	case N_SEQ: exec_node(n->a); rc = exiting || breaking || continuing ? last_status : exec_node(n->b); break;
	case N_IF:
		if (exec_node(n->a) == 0) rc = exec_node(n->b);
		else rc = n->c ? exec_node(n->c) : 0;
		break;
	case N_WHILE:
	case N_UNTIL:
		for (;;) {
			int c = exec_node(n->a);
			if (exiting || interrupted || ((c == 0) != (n->type == N_WHILE))) break;
			rc = exec_node(n->b);
			if (breaking) { breaking = 0; break; }
			continuing = 0;
			if (exiting) break;
		}
		break;
	case N_FOR: {
		fields f = {0};
		if (n->nwords < 0) {
			for (int i = 0; i < npos; i++) f_push(&f, pos_args[i]);
		} else {
			for (int i = 0; i < n->nwords; i++) expand(n->words[i], &f);
		}
		for (int i = 0; i < f.n && !exiting; i++) {
			set_var(n->var, f.v[i]);
			rc = exec_node(n->b);
			if (breaking) { breaking = 0; break; }
			continuing = 0;
		}
		break;
	}
	case N_GROUP:
	case N_SUBSHELL: {
		saved_io s;
		if (apply_redirs(n->redirs, &s) != 0) {
			restore_io(&s);
			rc = 1;
			break;
		}
		rc = exec_node(n->a);
		if (n->type == N_SUBSHELL && exiting) {
			exiting = 0;
		}
		restore_io(&s);
		break;
	}
	}
	last_status = rc;
	fflush(OUT);
	return rc;
}

// parse parses src. *err is set when src is not valid (with a message when
// report), *incomplete when it ends inside a command.
static node *parse(const char *src, int *incomplete, int *err, int report) {
	lexer lx = {.s = src};
	next(&lx);
	node *n = parse_list(&lx, 1);
	*incomplete = lx.incomplete;
	*err = lx.error || lx.incomplete;
	if (*err && report) {
		if (lx.incomplete) {
			fprintf(ERR, "sh: syntax error: unexpected end of file\n");
		} else if (lx.cur.type == T_WORD) {
			fprintf(ERR, "sh: syntax error: unexpected \"%s\"\n", lx.cur.text);
		} else {
			static const char *ops[] = {"word", "newline", ";", "&", "&&", "||", "|", "(", ")", "redirection", "end of file", "token"};
			fprintf(ERR, "sh: syntax error: unexpected %s\n", ops[lx.cur.type]);
		}
	}
	return *err ? NULL : n;
}

static int run_string(const char *src) {
	int inc, err;
	node *n = parse(src, &inc, &err, 1);
	if (err) {
		last_status = 2;
		return 2;
	}
	return exec_node(n);
}

// interactive reads commands from the input line by line, a prompt before
// each when the input is a terminal, until end of input or exit.
static int interactive(rd *in) {
	int tty = in == &rd_stdin && host_isatty(0);
	if (tty) {
		host_sigint(1); // catch Ctrl-C: it stops the command, not the shell
		catching_intr = 1;
	}
	char *acc = NULL, *line = NULL;
	size_t cap = 0, acclen = 0;
	for (;;) {
		if (tty) {
			char cwd[1024];
			if (getcwd(cwd, sizeof cwd) == NULL) snprintf(cwd, sizeof cwd, "?");
			fprintf(stderr, acc ? "> " : "%s # ", cwd);
			fflush(stderr);
		}
		if (rd_line(in, &line, &cap) == NULL) {
			if (acc) {
				fprintf(ERR, "sh: syntax error: unexpected end of file\n");
				last_status = 2;
			}
			if (tty) {
				fputc('\n', stderr);
			}
			break;
		}
		size_t n = strlen(line);
		acc = realloc(acc, acclen + n + 2);
		memcpy(acc + acclen, line, n);
		acclen += n;
		acc[acclen++] = '\n';
		acc[acclen] = '\0';
		int inc, err;
		node *tree = parse(acc, &inc, &err, 0);
		if (err && inc) {
			continue; // read the rest of the command
		}
		if (err) {
			parse(acc, &inc, &err, 1);
			last_status = 2;
		} else {
			exec_node(tree);
		}
		free(acc);
		acc = NULL;
		acclen = 0;
		fflush(stdout);
		if (exiting) {
			break;
		}
		if (intr_pending()) {
			interrupted = 0;
			last_status = 130;
		}
		host_sigint(2); // a Ctrl-C at the prompt only drops the line
		interrupted = 0;
	}
	free(line);
	return last_status;
}

static int sh_main(int argc, char **argv) {
	int i = 1;
	const char *cmd = NULL;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "-c") == 0) {
			if (i + 1 >= argc) {
				fprintf(ERR, "sh: -c requires an argument\n");
				return 2;
			}
			cmd = argv[++i];
			i++;
			break;
		}
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		// -i, -e, -x, -l...: accepted, not acted on
	}
	if (cmd != NULL) {
		if (i < argc) {
			arg0 = argv[i++];
		}
		pos_args = argv + i;
		npos = argc - i;
		int rc = run_string(cmd);
		return exiting ? rc : last_status;
	}
	if (i < argc) {
		// sh SCRIPT [ARGS...]
		rd r;
		if (open_in(argv[i], &r) != 0) {
			return 127;
		}
		size_t len;
		char *src = slurp(&r, &len);
		close_in(&r);
		src = realloc(src, len + 1);
		src[len] = '\0';
		arg0 = argv[i++];
		pos_args = argv + i;
		npos = argc - i;
		int rc = run_string(src);
		return exiting ? rc : last_status;
	}
	return interactive(IN);
}
