"""LeNet-5 on MNIST with MindSpore 2.x (the original, as MindSpore's tutorial writes it).

    python lenet_mindspore.py MNIST_DIR      (MNIST_DIR holds the four idx files of MNIST)
"""

import sys

import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
from mindspore import dtype as mstype
from mindspore import nn
from mindspore.common.initializer import Normal
from mindspore.train import Accuracy, CheckpointConfig, LossMonitor, Model, ModelCheckpoint, TimeMonitor


def create_dataset(data_path, usage, batch_size=32):
    mnist_ds = ds.MnistDataset(data_path, usage=usage)
    image_ops = [vision.Resize((32, 32)), vision.Rescale(1.0 / 255.0, 0.0),
                 vision.Rescale(1 / 0.3081, -1 * 0.1307 / 0.3081), vision.HWC2CHW()]
    mnist_ds = mnist_ds.map(operations=image_ops, input_columns="image")
    mnist_ds = mnist_ds.map(operations=transforms.TypeCast(mstype.int32), input_columns="label")
    mnist_ds = mnist_ds.shuffle(buffer_size=1024).batch(batch_size, drop_remainder=True)
    return mnist_ds


class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
        self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
        self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def main(data_dir):
    train_ds = create_dataset(data_dir, "train")
    test_ds = create_dataset(data_dir, "test")
    net = LeNet5()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    model = Model(net, loss, opt, metrics={"Accuracy": Accuracy()})
    config_ck = CheckpointConfig(save_checkpoint_steps=100, keep_checkpoint_max=3)
    ckpoint = ModelCheckpoint(prefix="checkpoint_lenet", directory="./lenet_ckpt", config=config_ck)
    model.train(2, train_ds, callbacks=[ckpoint, LossMonitor(50), TimeMonitor()], dataset_sink_mode=False)
    print("accuracy:", model.eval(test_ds))


if __name__ == "__main__":
    main(sys.argv[1])
