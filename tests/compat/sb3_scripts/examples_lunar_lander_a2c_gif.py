# SB3 docs, guide/examples.md ("Bonus: Make a GIF of a Trained Agent": A2C on LunarLander, box2d extra, and
# imageio), with stable_baselines3 renamed lit_sb3. Changed for the test: 100_000 -> 2_000 timesteps; a check
# at the end that the GIF was written.
import imageio
import numpy as np

from lit_sb3 import A2C

model = A2C("MlpPolicy", "LunarLander-v3").learn(2_000)

images = []
obs = model.env.reset()
img = model.env.render(mode="rgb_array")
for i in range(350):
    images.append(img)
    action, _ = model.predict(obs)
    obs, _, _ ,_ = model.env.step(action)
    img = model.env.render(mode="rgb_array")

imageio.mimsave("lander_a2c.gif", [np.array(img) for i, img in enumerate(images) if i%2 == 0], fps=29)

import os
assert os.path.getsize("lander_a2c.gif") > 0  # added for the test
