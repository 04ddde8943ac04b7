/** Tree item properties for what a container started through its Docker endpoint, and what one left behind (ui/views/treeItems/index.ts). */
import type { DockerChildrenSummary } from '../../../backend/api/editor';
import { inline, plainItem } from '../../plainText';
import { type ItemProps } from './containers';

/** The label of the group under a container that lists what it started through its Docker endpoint. */
export const DOCKER_CHILDREN_LABEL = 'Started with Docker';

/** "2 containers · 1 network · 1 volume". */
export function dockerChildrenCount(c: DockerChildrenSummary): string {
  const part = (n: number, one: string) => (n === 0 ? undefined : `${n} ${one}${n === 1 ? '' : 's'}`);
  return [part(c.containers.length, 'container'), part(c.networks.length, 'network'), part(c.volumes.length, 'volume')]
    .filter((p) => p !== undefined)
    .join(' · ');
}

export function dockerChildrenGroupItem(c: DockerChildrenSummary): ItemProps {
  return plainItem(
    {
      label: DOCKER_CHILDREN_LABEL,
      description: dockerChildrenCount(c),
      icon: { id: 'layers' },
      contextValue: 'dockerChildren',
      tooltip:
        'What this container started through its own Docker endpoint (docker run, docker compose, Testcontainers). ' +
        'When the container is stopped, its containers and networks are removed with it; its named volumes are kept.',
    },
    'message',
  );
}

/**
 * A top-level row for what `owner` started through its Docker endpoint and is still here though
 * `owner` is gone (engine/dockerEndpoint/children.ts leftBehindOf): removed by the toolbox CLI, `docker rm`
 * or anything but this editor, which would have removed them with it.
 */
export function leftBehindGroupItem(owner: string, c: DockerChildrenSummary): ItemProps {
  return plainItem(
    {
      label: `Left behind by ${owner}`,
      description: dockerChildrenCount(c),
      icon: { id: 'layers', color: 'list.warningForeground' },
      contextValue: 'leftBehind',
      tooltip:
        `${inline(owner, 120)}, the container that started these through its Docker endpoint, is gone: something other than ` +
        'this editor removed it (the toolbox CLI, docker rm), and they kept running. ' +
        'Remove What Was Left Behind removes its containers and networks; its named volumes are kept.',
    },
    'message',
  );
}

/** One thing a container started: a container (its image and state), a network, or a named volume. */
export function dockerChildItem(
  child: { kind: 'container'; name: string; image: string; state: string } | { kind: 'network' | 'volume'; name: string },
): ItemProps {
  if (child.kind === 'container') {
    return plainItem({
      label: child.name,
      description: `${child.image} · ${child.state}`,
      icon: { id: child.state === 'running' ? 'vm-running' : 'vm-outline' },
      contextValue: 'dockerChild.container',
      tooltip: `A container started from ${inline(child.image)}: removed with its parent.`,
    });
  }
  return plainItem({
    label: child.name,
    description: child.kind === 'network' ? 'network' : 'volume · kept when the container goes',
    icon: { id: child.kind === 'network' ? 'type-hierarchy' : 'database' },
    contextValue: `dockerChild.${child.kind}`,
    tooltip:
      child.kind === 'network'
        ? 'A network it made: removed with its parent.'
        : 'A named volume it made: kept when its parent goes, since it holds data. Remove it with docker volume rm.',
  });
}
