# Time to empty against process count (flat workloads), one line per
# contender, log scales. Run by `make bench`:
#	gnuplot -e "datafile='results/latest-full.dat'; outfile='time-to-empty.png'" plot.gp
if (!exists("datafile")) datafile = 'results/latest-full.dat'
if (!exists("outfile")) outfile = 'time-to-empty.png'
set terminal pngcairo size 1000,620 font ",10"
set output outfile
set title "cgkill: time until a flat cgroup of sleeping processes is empty (median, min–max)"
set logscale xy
set xlabel "processes in the cgroup"
set ylabel "ms from the kill's start until populated 0"
set key outside right top
set grid xtics ytics mxtics mytics
set xtics (100, 300, 1000, 3000, 10000)
set xrange [70:14000]
colors = "black #1b9e77 #d95f02 #7570b3 #e7298a #66a61e #e6ab02 #a6761d #666666 #1f78b4 #e31a1c #b2df8a"
stats datafile using 1 nooutput
plot for [i=0:STATS_blocks-1] datafile index i using 1:2:3:4 \
	with yerrorlines pointsize 0.8 lw 1.5 lc rgb word(colors, i + 1) pt i + 1 \
	title columnheader(1)
