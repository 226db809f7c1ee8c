import { describe, it, expect } from 'vitest';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';

// Against the real Docker engine (CI starts it): the engine always holds the offline base image
// by the time the suite runs this, so its layers take more than a few bytes.
describe('Docker disk budget', () => {
  const docker = new DockerClient();
  it('measures the image layers and refuses to build over the budget', async () => {
    await docker.ping();
    const used = await docker.imageDiskUsage();
    expect(used).toBeGreaterThan(0);
    await expect(docker.assertDiskBudget(1e6)).resolves.toBeUndefined();
    await expect(docker.assertDiskBudget(1e-9)).rejects.toMatchObject({
      code: 'disk_budget_exceeded',
      tier: 'infra',
      message: expect.stringMatching(/over the budget of 1e-9 GiB .*telebench images prune/),
    });
  });
});
