//! The seccomp filter: allow by default, refuse (EPERM) what the envelope and the other
//! layers cannot hold.
//!
//! Refused always: packet sockets; raw sockets of any family but netlink (`ip`, and glibc's
//! interface lookup, use raw netlink sockets, which reach no network); SCTP, MPTCP and any
//! other non-TCP stream or datagram protocol over IP unless the network is `any` (Landlock
//! holds TCP only); system calls that would undo or step around the sandbox: namespaces
//! (`unshare`, `setns`, `clone` with a namespace flag), mounts (old and new API),
//! `ptrace` and `process_vm_*`, the kernel keyring, `bpf`, `perf_event_open`,
//! `userfaultfd`, `kexec_*`, module loading, `open_by_handle_at` (opens by inode,
//! past paths) and io_uring (its operations are not seen by seccomp). `clone3` fails
//! with ENOSYS, so that libc falls back to `clone`, whose flags can be read. On x86_64
//! every x32 system call is refused.
//!
//! Refused by the envelope: Unix-domain sockets unless `unix_sockets`; UDP (and any
//! non-stream IP socket) unless the network is `any`.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use super::super::{Envelope, Network, SandboxError};

fn err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Seccomp(e.to_string())
}

/// Builds the filter for `envelope` and installs it (setting no_new_privs first).
pub(super) fn install(envelope: &Envelope) -> Result<(), SandboxError> {
    let program = program(envelope)?;
    seccompiler::apply_filter(&program).map_err(err)
}

/// A positive libc constant as an argument value.
fn u(value: i32) -> u64 {
    u64::from(value.unsigned_abs())
}

fn arg(index: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value).map_err(err)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conditions).map_err(err)
}

const TYPE_MASK: u64 = 0xf;
/// The obsolete `SOCK_PACKET` type (libc marks the constant deprecated).
const SOCK_PACKET: i32 = 10;

/// The socket() rules that refuse.
fn socket_rules(envelope: &Envelope) -> Result<Vec<SeccompRule>, SandboxError> {
    let family = |f: i32| arg(0, SeccompCmpOp::Eq, u(f));
    let kind = |t: i32| arg(1, SeccompCmpOp::MaskedEq(TYPE_MASK), u(t));
    let mut rules = vec![
        rule(vec![family(libc::AF_PACKET)?])?,
        rule(vec![
            arg(0, SeccompCmpOp::Ne, u(libc::AF_NETLINK))?,
            kind(libc::SOCK_RAW)?,
        ])?,
    ];
    if !envelope.unix_sockets {
        rules.push(rule(vec![family(libc::AF_UNIX)?])?);
    }
    if envelope.network != Network::Any {
        for f in [libc::AF_INET, libc::AF_INET6] {
            for t in [
                libc::SOCK_DGRAM,
                libc::SOCK_SEQPACKET,
                libc::SOCK_RDM,
                SOCK_PACKET,
            ] {
                rules.push(rule(vec![family(f)?, kind(t)?])?);
            }
            // A stream socket of another protocol than TCP (SCTP, MPTCP).
            rules.push(rule(vec![
                family(f)?,
                kind(libc::SOCK_STREAM)?,
                arg(2, SeccompCmpOp::Ne, 0)?,
                arg(2, SeccompCmpOp::Ne, u(libc::IPPROTO_TCP))?,
            ])?);
        }
    }
    Ok(rules)
}

/// System calls refused whatever their arguments.
const REFUSED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
];

const NAMESPACE_FLAGS: [i32; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// The compiled filter for this architecture.
pub(super) fn program(envelope: &Envelope) -> Result<BpfProgram, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(err)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &call in REFUSED {
        rules.insert(call, Vec::new());
    }
    rules.insert(libc::SYS_socket, socket_rules(envelope)?);
    // Typing into the terminal the call shares with its caller would run
    // commands outside the sandbox once it ends (TIOCSTI), as would the
    // console's paste (TIOCLINUX).
    let mut ioctl = Vec::new();
    for cmd in [libc::TIOCSTI, libc::TIOCLINUX] {
        #[allow(
            clippy::useless_conversion,
            reason = "the request's type is u64 on 64-bit targets, u32 elsewhere"
        )]
        let cmd = u64::from(cmd);
        ioctl.push(rule(vec![arg(1, SeccompCmpOp::Eq, cmd)?])?);
    }
    rules.insert(libc::SYS_ioctl, ioctl);
    let mut clone = Vec::new();
    for flag in NAMESPACE_FLAGS {
        clone.push(rule(vec![arg(
            0,
            SeccompCmpOp::MaskedEq(u(flag)),
            u(flag),
        )?])?);
    }
    rules.insert(libc::SYS_clone, clone);
    let eperm = SeccompAction::Errno(libc::EPERM.unsigned_abs());
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, eperm, arch).map_err(err)?;
    let mut program: BpfProgram = filter.try_into().map_err(err)?;
    // clone3 passes its flags in memory, out of the filter's sight: ENOSYS makes libc use
    // clone. Added by hand because the filter above has one refusal action.
    let enosys = ret(libc::SECCOMP_RET_ERRNO | libc::ENOSYS.unsigned_abs());
    let mut guard = vec![
        load_nr(),
        jump(BPF_JEQ, u32::try_from(libc::SYS_clone3).map_err(err)?, 0, 1),
        enosys,
    ];
    if arch == TargetArch::x86_64 {
        guard.extend([
            load_nr(),
            jump(BPF_JGE, X32_SYSCALL_BIT, 0, 1),
            ret(libc::SECCOMP_RET_ERRNO | libc::EPERM.unsigned_abs()),
        ]);
    }
    insert_after_arch_check(&mut program, guard)?;
    Ok(program)
}

// Classic BPF opcodes (linux/bpf_common.h): BPF_LD | BPF_W | BPF_ABS, BPF_JMP | BPF_JEQ
// | BPF_K, BPF_JMP | BPF_JGE | BPF_K, BPF_RET | BPF_K.
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ: u16 = 0x15;
const BPF_JGE: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn load_nr() -> sock_filter {
    // `nr` is the first field of `struct seccomp_data`.
    sock_filter {
        code: BPF_LD_W_ABS,
        jt: 0,
        jf: 0,
        k: 0,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

fn ret(k: u32) -> sock_filter {
    sock_filter {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k,
    }
}

/// Inserts `guard` after seccompiler's three-instruction architecture check (load arch,
/// jump if equal over the kill, kill). Jumps are relative and none crosses the point.
fn insert_after_arch_check(
    program: &mut BpfProgram,
    guard: Vec<sock_filter>,
) -> Result<(), SandboxError> {
    let is_check = program.len() > 3
        && program[0].code == BPF_LD_W_ABS
        && program[1].code == BPF_JEQ
        && program[1].jt == 1
        && program[2].code == BPF_RET_K;
    if !is_check {
        return Err(SandboxError::Seccomp(
            "the filter does not begin with the expected architecture check".to_owned(),
        ));
    }
    program.splice(3..3, guard);
    Ok(())
}

#[cfg(test)]
mod tests {
    #![expect(clippy::expect_used, reason = "tests")]
    use super::*;

    #[test]
    fn the_program_builds_for_every_envelope_shape() {
        for network in [Network::None, Network::Ports(vec![443]), Network::Any] {
            for unix_sockets in [false, true] {
                let envelope = Envelope {
                    network: network.clone(),
                    unix_sockets,
                    ..Envelope::default()
                };
                let program = program(&envelope).expect("program");
                assert!(program.len() > 40, "{}", program.len());
                assert!(program.len() < u16::MAX as usize);
            }
        }
    }
}
