/*
 * Internals shared by the executors' files: the instance every variant
 * fills (executor.c opens and closes it) and the helpers both use.
 */
#ifndef AUTOSCHED_EXECUTOR_INT_H
#define AUTOSCHED_EXECUTOR_INT_H

#include "executors/executor.h"

struct proc_result;

struct executor {
	const struct executor_ops	*ops;
	struct executor_config		 cfg;	/* strings owned */
	void				*state;	/* the variant's own; its close frees it */
};

/* This machine's host name into buf ("" if unknown). */
void	executor_hostname(char *buf, size_t len);
/*
 * Move pr's captured output into res (out and err never NULL after it),
 * leaving pr's pointers NULL.
 */
void	executor_take_output(struct proc_result *, struct executor_result *);

#endif
