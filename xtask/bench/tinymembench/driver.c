/*
 * benchboot's bench driver for tinymembench (ssvb/tinymembench a2cf6d7, vendored beside
 * this file unchanged, MIT, see LICENSE): the reference side of `cargo xtask bench
 * memory`. Never shipped on an image.
 *
 * main.c is included whole, so "standard memcpy" and "standard memset" run through
 * tinymembench's own bandwidth_bench_helper, buffers and offsets
 * (alloc_four_nonaliased_buffers, 32 MiB each). The latency part is latency_bench's body
 * verbatim but for one block size (tinymembench runs every size from 1 KiB, about two
 * minutes a table): argv[1] bytes, 64 MiB by default, with MADV_NOHUGEPAGE and then
 * MADV_HUGEPAGE, printed in tinymembench's row format.
 */
#define main tinymembench_main
#include "main.c"
#undef main

static void latency_row(int size, int count, int use_hugepage)
{
    double t, t2, t_before, t_after, t_noaccess = 0, t_noaccess2 = 0;
    double xs, xs1, xs2, ys, ys1, ys2, min_t = 0, min_t2 = 0;
    int nbits, n;
    char *buffer_alloc, *buffer;
    if (posix_memalign((void **)&buffer_alloc, 4 * 1024 * 1024, size) != 0)
        return;
    buffer = buffer_alloc;
    if (madvise(buffer, size, use_hugepage > 0 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0)
    {
        free(buffer_alloc);
        return;
    }
    memset(buffer, 0, size);
    for (n = 1; n <= MAXREPEATS; n++)
    {
        t_before = gettime();
        random_read_test(buffer, count, 1);
        t_after = gettime();
        if (n == 1 || t_after - t_before < t_noaccess)
            t_noaccess = t_after - t_before;
        t_before = gettime();
        random_dual_read_test(buffer, count, 1);
        t_after = gettime();
        if (n == 1 || t_after - t_before < t_noaccess2)
            t_noaccess2 = t_after - t_before;
    }
    for (nbits = 10; (1 << nbits) < size; nbits++)
        ;
    {
        int testsize = 1 << nbits;
        xs1 = xs2 = ys = ys1 = ys2 = 0;
        for (n = 1; n <= MAXREPEATS; n++)
        {
            int testoffs = (rand32() % (size / testsize)) * testsize;
            t_before = gettime();
            random_read_test(buffer + testoffs, count, nbits);
            t_after = gettime();
            t = t_after - t_before - t_noaccess;
            if (t < 0) t = 0;
            xs1 += t;
            xs2 += t * t;
            if (n == 1 || t < min_t)
                min_t = t;
            t_before = gettime();
            random_dual_read_test(buffer + testoffs, count, nbits);
            t_after = gettime();
            t2 = t_after - t_before - t_noaccess2;
            if (t2 < 0) t2 = 0;
            ys1 += t2;
            ys2 += t2 * t2;
            if (n == 1 || t2 < min_t2)
                min_t2 = t2;
            if (n > 2)
            {
                xs = sqrt((xs2 * n - xs1 * xs1) / (n * (n - 1)));
                ys = sqrt((ys2 * n - ys1 * ys1) / (n * (n - 1)));
                if (xs < min_t / 1000. && ys < min_t2 / 1000.)
                    break;
            }
        }
        printf("latency %s %10d : %6.1f ns          /  %6.1f ns \n",
            use_hugepage > 0 ? "huge" : "base", (1 << nbits),
            min_t * 1000000000. / count,  min_t2 * 1000000000. / count);
    }
    free(buffer_alloc);
}

int main(int argc, char **argv)
{
    int64_t *srcbuf, *dstbuf, *tmpbuf;
    int latency_bytes = argc > 1 ? atoi(argv[1]) : SIZE * 2;
    void *poolbuf = alloc_four_nonaliased_buffers((void **)&srcbuf, SIZE,
                                                  (void **)&dstbuf, SIZE,
                                                  (void **)&tmpbuf, BLOCKSIZE,
                                                  NULL, 0);
    bandwidth_bench(dstbuf, srcbuf, tmpbuf, SIZE, BLOCKSIZE, " ", libc_benchmarks);
    free(poolbuf);
    if (latency_bytes > 0)
    {
        latency_row(latency_bytes, LATBENCH_COUNT, -1);
        latency_row(latency_bytes, LATBENCH_COUNT, 1);
    }
    return 0;
}
