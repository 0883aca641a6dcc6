/* A fixture for the C golden test. */
#include <stdio.h>

/* LIMIT is how many shapes fit. */
#define LIMIT 10
#define SQUARE(x) ((x) * (x))

/* A rectangle. */
struct rect {
	double w; /* width */
	double h;
};

typedef struct rect rect_t;

typedef struct {
	int x, y;
} point;

enum color { RED, GREEN = 2 };

union number {
	int i;
	double d;
};

static int counter = 0;
const char *names[] = {"a", "b"};

double area(const struct rect *r);

/* area returns the area of r. */
double area(const struct rect *r)
{
	return r->w * r->h;
}

static int *
make_ints(int n, int (*cmp)(const void *, const void *))
{
	int local = n + LIMIT;
	counter += SQUARE(local);
	return NULL;
}
