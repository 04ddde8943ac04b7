/**
 * Run Doctor's runtime image lines (plan/doctor/): each image the folders' next containers use,
 * present or not, built from this context or not, and the containers that run an older one.
 */
import { COMMAND_LABELS, SETTINGS } from '../../contract/manifest';
import { oneLine, OPEN_SHELL, RECREATE, RUN, unreadCheck } from './shared';
import { isUnread, type DoctorCheck, type DoctorFacts } from './types';

export function imageChecks(facts: DoctorFacts): DoctorCheck[] {
  if (isUnread(facts.images)) return [unreadCheck('image', 'Runtime image', facts.images)];
  const checks: DoctorCheck[] = [];
  for (const img of facts.images) {
    const ref = oneLine(img.ref, 300);
    const id = `image:${img.ref}`;
    if (!img.ours) {
      checks.push({
        id,
        status: img.present ? 'info' : 'warn',
        title: 'Custom image',
        detail: img.present
          ? `${ref} (image: in the configuration), on this machine; not the Toolbox runtime image, so no tag or staleness check.`
          : `${ref} (image: in the configuration) is not on this machine: the next open pulls it.`,
        ...(img.present ? {} : { fix: `Run ${OPEN_SHELL}, or pull it yourself (docker pull ${ref}).` }),
      });
      continue;
    }
    if (!img.present) {
      checks.push({
        id,
        status: 'warn',
        title: 'Runtime image',
        detail: `${ref} is not on this machine yet: the next open ${img.pullFrom ? `pulls it from ${oneLine(img.pullFrom, 300)}, or builds it when the pull fails` : `builds it (${SETTINGS.runtimeImagePull} is off)`} (a few minutes, once).`,
        fix: RUN(OPEN_SHELL),
      });
      continue;
    }
    if (img.tagHash !== undefined && img.labelHash !== img.tagHash) {
      checks.push({
        id,
        status: 'fail',
        title: 'Runtime image',
        detail: `${ref} is present, but was built from another context (its label says ${oneLine(img.labelHash ?? 'nothing', 40)}).`,
        fix: RUN(COMMAND_LABELS.rebuildRuntimeImage.label),
      });
      continue;
    }
    const stale = facts.folders.flatMap((f) =>
      f.imageRef === img.ref && !isUnread(f.containers)
        ? f.containers.filter((c) => c.imageId !== undefined && img.id !== undefined && c.imageId !== img.id)
        : [],
    );
    const how = img.pulled ? 'pulled from a registry' : 'built on this machine';
    checks.push({
      id,
      status: 'pass',
      title: 'Runtime image',
      detail: `${ref}, present (the content-hash tag this extension asks for), ${how}; ${stale.length === 0 ? 'not stale: no container here runs an older one.' : 'see the stale containers below.'}`,
    });
    for (const c of stale) {
      checks.push({
        id: `image.stale:${c.name}`,
        status: 'warn',
        title: `Stale image in ${oneLine(c.name, 200)}`,
        detail: `It runs an older runtime image than ${ref}: what changed since (the shims, the agents) is not in it.`,
        fix: RECREATE,
      });
    }
  }
  return checks;
}
