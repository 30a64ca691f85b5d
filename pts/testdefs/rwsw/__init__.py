"""The SNIA RWSW tests (Real World Storage Workload PTS 1.0.7; rwsw-digest §5) on the Applied
Test Workload of --workload, one module each over one common base (blktests' tests/nvme/rc:
a group's shared helpers in one place, no test imports another):

    common.py       the ATW check, the spec's [rwsw_*] sections, round length, fields,
                    test_start parameters, an ATW point's job and shares, --dry-run plan,
                    the preconditioning phase of replay and dirth
    wsat.py         rwsw-wsat     Multi-WSAT: the whole ATW to the WSAT stop rule
    streams.py      rwsw-streams  Individual Streams-WSAT: each stream alone
    replay.py       rwsw-replay   Replay-Native: the capture's steps in order
    replay_log.py   a replay step's fio iolog (hold "iolog"), made in chunks
    replay_feed.py  the step logs served to fio through Unix sockets as the steps run
    dirth.py        rwsw-dirth    DIRTH with the ATW
"""
