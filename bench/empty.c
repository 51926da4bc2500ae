/* empty.c: the anchor of make bench's start-up row: a C program that does nothing, started the
 * same way as cudalab (bench/startup.c). What it costs is the floor any program pays here. */
int main(void) { return 0; }
