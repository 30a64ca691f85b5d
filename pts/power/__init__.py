"""Power sources and the energy maths (issue 51): what each round drew, from the drive, the
server's BMC, the host's RAPL counters, a lab meter or the emulated SSD's power model.

Modules: energy (the maths, pure: a window's energy, mean W, coverage, IOPS/W), source (the
PowerSource protocol and the recorder that samples one on a thread), bmc (IPMI, Redfish),
host (RAPL, a meter's command), emulated (the emulated SSD's model), spec (`--power`
parsing, building, the start-up check). Below the run (which records a window per round),
above the tools and the emulated SSD it reads.
"""
