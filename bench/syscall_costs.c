/* What one check of index.json costs, in system calls: the lstat of its absolute path (the
 * store's check before the inotify watch), a relative fstatat, an fstat of an open directory,
 * and a read of an inotify descriptor with no event queued (the watch's check). A million
 * calls of each; run it twice, with and without an index.json in the directory.
 *
 *   cc -O2 -o /tmp/syscall_costs bench/syscall_costs.c
 *   d=$(mktemp -d); echo '{}' > $d/index.json; /tmp/syscall_costs $d; rm $d/index.json; /tmp/syscall_costs $d
 */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/inotify.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
#include <stdlib.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c,char**v){
  const char*dir=v[1]; char path[4096]; snprintf(path,sizeof path,"%s/index.json",dir);
  int n=1000000; struct stat st; double t;
  t=now(); for(int i=0;i<n;i++) lstat(path,&st); printf("lstat abs   %.0f ns\n",(now()-t)/n*1e9);
  int dfd=open(dir,O_RDONLY|O_DIRECTORY);
  t=now(); for(int i=0;i<n;i++) fstatat(dfd,"index.json",&st,AT_SYMLINK_NOFOLLOW); printf("fstatat rel %.0f ns\n",(now()-t)/n*1e9);
  t=now(); for(int i=0;i<n;i++) fstat(dfd,&st); printf("fstat fd    %.0f ns\n",(now()-t)/n*1e9);
  int in=inotify_init1(IN_NONBLOCK|IN_CLOEXEC); inotify_add_watch(in,dir,IN_MOVED_TO|IN_CREATE|IN_DELETE|IN_MODIFY|IN_MOVED_FROM);
  char buf[4096];
  t=now(); for(int i=0;i<n;i++) read(in,buf,sizeof buf); printf("inotify read EAGAIN %.0f ns\n",(now()-t)/n*1e9);
  t=now(); for(int i=0;i<n;i++) getppid(); printf("getppid     %.0f ns\n",(now()-t)/n*1e9);
  return 0;
}
